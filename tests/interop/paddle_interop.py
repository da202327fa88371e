"""Paddle ⇄ irw interop check (run by tests/interop/paddle.sh inside a venv with paddlepaddle==3.3.1).

For the SGD and Adam fixtures:
  1. Paddle builds the program (the builder that produced ../shared/fixtures/paddle/before*.ir; the
     printed text is checked against the fixture) and serializes it with serialize_pir_program.
  2. Round trip: irw reads Paddle's JSON and writes JSON; Paddle loads irw's files and must print
     exactly what it prints for its own (main and startup). The paddle-json fixtures go through
     the same round trip.
  3. Gradient merge (k=4): irw rewrites Paddle's JSON with rules/grad_merge.rw. If this irw cannot
     apply rule files yet, irw instead reads Paddle's own gradient-merged program (the after*.ir
     text fixtures, which Paddle printed) and writes that as JSON: the write/load path under test
     is the same.
  4. Paddle loads irw's main and startup, runs the startup, and trains the Engine way: per
     optimizer step, k-1 micro-batches through main with every op_role==2 op removed, then one
     micro-batch through the whole main (FLAGS_new_executor_sequential_run=1). The original program
     trains on the full batches. After 3 steps the parameters must agree.
  5. Auto-parallel (pd_dist) programs, the ../shared/fixtures/paddle-dist Engine fixtures: irw
     writes each before/startup_before text as JSON; Paddle must print it exactly as the fixture,
     irw must read it back to the same text, and JSON -> irw -> JSON must print the same. Then
     mlp2_adam_k2: Paddle runs irw's JSON (apply_dist2dense_pass, as the Engine does, then
     Executor) for one full-batch step from the fixture's state_init, and irw's gradient merge of
     that JSON (grad_merge.rw, k_steps=2) with the Engine's schedule; both must match the
     fixture's params_after_full_batch_step within 1e-6.
Exits non-zero on any mismatch.
"""

import argparse
import json
import os
import subprocess
import sys

os.environ["FLAGS_new_executor_sequential_run"] = "1"

import numpy as np  # noqa: E402
import paddle  # noqa: E402
from paddle.base.framework import pir_op_role_guard  # noqa: E402

paddle.enable_static()

K = 4
STEPS = 3
BATCH = 8
# float32 gradients summed over micro-batches in a different order than one full batch: Paddle's
# own gradient merge differs from full-batch training by 3e-8 after one step (NUMERICS.md).
ATOL = 1e-6

FAILURES = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        FAILURES.append(what)


def build(opt):
    """The fixture builder: a 3-layer MLP with MSE loss, op roles 0/1/2."""
    # `struct_name:"/Linear_3/"` keeps counting across builds in one process unless reset.
    paddle.base.framework._name_struct = paddle.base.framework.NameStruct()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.utils.unique_name.guard():
        with paddle.static.program_guard(main, startup):
            with pir_op_role_guard(0):
                x = paddle.static.data("x", [-1, 8], "float32")
                y = paddle.static.data("y", [-1, 4], "float32")
                h = paddle.nn.Linear(8, 16)(x)
                h = paddle.nn.functional.relu(h)
                h = paddle.nn.Linear(16, 16)(h)
                h = paddle.nn.functional.relu(h)
                out = paddle.nn.Linear(16, 4)(h)
                loss = paddle.mean((out - y) ** 2)
                if opt == "sgd":
                    o = paddle.optimizer.SGD(learning_rate=0.1)
                else:
                    o = paddle.optimizer.Adam(learning_rate=0.01)
            with pir_op_role_guard(1):
                pg = o.backward(loss)
            with pir_op_role_guard(2):
                o._apply_optimize(loss, startup, pg)
    for op in main.global_block().ops:
        if op.name() == "pd_op.data" and op.has_attr("op_role"):
            op.set_int_attr("op_role", 0)
    for op in startup.global_block().ops:
        if op.has_attr("op_role"):
            op.erase_attr("op_role")
    return main, startup


def text(prog):
    s = str(prog)
    return s if s.endswith("\n") else s + "\n"


def load(path):
    prog = paddle.static.Program()
    paddle.base.core.deserialize_pir_program(path, prog, -1)
    return prog


def serialize(prog, path):
    paddle.base.core.serialize_pir_program(prog, path, True, False, True)


def irw(args, irw_bin, check_rc=True):
    r = subprocess.run([irw_bin] + args, capture_output=True, text=True)
    if check_rc and r.returncode != 0:
        print(r.stderr, file=sys.stderr)
        raise SystemExit(f"irw {' '.join(args)} failed with exit code {r.returncode}")
    return r


def round_trip(main_json, startup_json, out_prefix, irw_bin):
    """JSON -> irw -> JSON; Paddle must print the same programs."""
    args = [main_json]
    outs = [out_prefix + "_main.json"]
    if startup_json:
        args += ["--startup", startup_json, "--startup-out", out_prefix + "_startup.json"]
        outs.append(out_prefix + "_startup.json")
    irw(args + ["--emit", "paddle-json", "-o", outs[0]], irw_bin)
    same = text(load(main_json)) == text(load(outs[0]))
    if startup_json:
        same = same and text(load(startup_json)) == text(load(outs[1]))
    return same


def param_names(prog):
    return sorted(
        op.attrs()["parameter_name"]
        for op in prog.global_block().ops
        if op.name() == "builtin.parameter"
    )


def loss_value(prog):
    """The forward loss: the first pd_op.mean (op_role 0)."""
    for op in prog.global_block().ops:
        if op.name() == "pd_op.mean":
            return op.result(0)
    raise SystemExit("no pd_op.mean in the program")


def without_role(prog, role):
    """A copy of prog with every op of the given op_role erased (the Engine's micro-steps)."""
    p = prog.clone()
    for op in reversed(list(p.global_block().ops)):
        if op.has_attr("op_role") and op.op_role == role:
            op.erase()
    return p


def scope_params(scope, names):
    return {n: np.array(scope.find_var(n).get_tensor()) for n in names}


def set_params(scope, values, place):
    for n, v in values.items():
        scope.find_var(n).get_tensor().set(v, place)


def batches():
    rng = np.random.RandomState(2024)
    return [
        (
            rng.standard_normal((BATCH, 8)).astype("float32"),
            rng.standard_normal((BATCH, 4)).astype("float32"),
        )
        for _ in range(STEPS)
    ]


def train_full(main, startup, data, place):
    scope = paddle.static.Scope()
    names = param_names(main)
    with paddle.static.scope_guard(scope):
        exe = paddle.static.Executor(place)
        paddle.seed(2024)
        exe.run(startup)
        init = scope_params(scope, names)
        loss = loss_value(main)
        losses = []
        for x, y in data:
            (l,) = exe.run(main, feed={"x": x, "y": y}, fetch_list=[loss])
            losses.append(float(l))
        return init, losses, scope_params(scope, names)


def train_engine(main, startup, data, place, init):
    scope = paddle.static.Scope()
    names = param_names(main)
    micro = BATCH // K
    with paddle.static.scope_guard(scope):
        exe = paddle.static.Executor(place)
        paddle.seed(2024)
        exe.run(startup)
        own_init = scope_params(scope, names)
        init_diff = max(float(np.abs(own_init[n] - init[n]).max()) for n in names)
        set_params(scope, init, place)
        skip = without_role(main, 2)
        loss_full, loss_skip = loss_value(main), loss_value(skip)
        losses = []
        for x, y in data:
            ls = []
            for i in range(K):
                feed = {"x": x[i * micro:(i + 1) * micro], "y": y[i * micro:(i + 1) * micro]}
                if i < K - 1:
                    (l,) = exe.run(skip, feed=feed, fetch_list=[loss_skip])
                else:
                    (l,) = exe.run(main, feed=feed, fetch_list=[loss_full])
                ls.append(float(l))
            losses.append(sum(ls) / K)
        return init_diff, losses, scope_params(scope, names)


def grad_merge(opt, main_json, startup_json, work, irw_bin, repo, fixtures):
    """irw's gradient-merged main and startup JSON; says which way they were made."""
    out_main, out_startup = f"{work}/{opt}_gm_main.json", f"{work}/{opt}_gm_startup.json"
    rules = os.path.join(repo, "rules", "grad_merge.rw")
    if os.path.exists(rules):
        r = irw(
            [main_json, "--startup", startup_json, "--rules", rules, "--set", f"k_steps={K}",
             "--emit", "paddle-json", "-o", out_main, "--startup-out", out_startup],
            irw_bin, check_rc=False)
        if r.returncode == 0:
            return out_main, out_startup, "irw --rules rules/grad_merge.rw on Paddle's JSON"
        reason = r.stderr.strip().splitlines()[0] if r.stderr.strip() else f"exit {r.returncode}"
    else:
        reason = "rules/grad_merge.rw is not in this checkout"
    sfx = "" if opt == "sgd" else "_adam"
    irw([f"{fixtures}/after{sfx}.ir", "--startup", f"{fixtures}/startup_after{sfx}.ir",
         "--emit", "paddle-json", "-o", out_main, "--startup-out", out_startup], irw_bin)
    return out_main, out_startup, (
        f"irw cannot apply the rules here ({reason}); irw read Paddle's own gradient-merged "
        f"program (after{sfx}.ir, startup_after{sfx}.ir) and wrote it as JSON")


# ---- auto-parallel (pd_dist) programs ---------------------------------------------------------

DIST_FIXTURES = ["mlp2_adam_k2", "mlp5_gelu_momentum_k4", "mlp3_tanh_sgd_dp2_k2"]
DIST_TRAINED = "mlp2_adam_k2"


def dense(prog):
    """What the Engine runs: apply_dist2dense_pass of a clone (pd_dist types become their local
    dense types, op_dist_attr is dropped)."""
    d = prog.clone()
    paddle.base.libpaddle.pir.apply_dist2dense_pass(d)
    return d


def train_dist(main_json, startup_json, num, k, place):
    """Paddle loads irw's dist main and startup, runs dist2dense(startup), loads the fixture's
    state_init, and runs one optimizer step the Engine way: k-1 micro-batches through main
    without its op_role 2 ops, then the last micro-batch through all of main. Returns the
    parameters and the largest |value| left in any @GRAD@MERGE buffer."""
    main, startup = dense(load(main_json)), dense(load(startup_json))
    skip = without_role(main, 2)
    scope = paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        exe = paddle.static.Executor(place)
        exe.run(startup)
        for n, e in num["state_init"].items():
            v = np.array(e["values"], dtype=np.float32).reshape(e["shape"])
            scope.var(n).get_tensor().set(v, place)
        feeds = {n: np.array(v, dtype=np.float32) for n, v in num["inputs"].items()}
        mb = num["batch"] // k
        for i in range(k):
            feed = {n: v[i * mb:(i + 1) * mb] for n, v in feeds.items()}
            exe.run(skip if i < k - 1 else main, feed=feed)
        params = {n: np.array(scope.find_var(n).get_tensor()).ravel() for n in num["param_names"]}
        buffers = [np.array(scope.find_var(n + "@GRAD@MERGE").get_tensor())
                   for n in num["param_names"] if scope.find_var(n + "@GRAD@MERGE") is not None]
    left = max((float(np.abs(b).max()) for b in buffers), default=0.0)
    return params, len(buffers), left


def dist_programs(a, place):
    fx = f"{a.fixtures}/paddle-dist"
    print("\n== auto-parallel (pd_dist) programs: irw writes them as JSON, Paddle loads them")
    for name in DIST_FIXTURES:
        main_ir, startup_ir = f"{fx}/{name}_before.ir", f"{fx}/{name}_startup_before.ir"
        mj, sj = f"{a.work}/{name}_main.json", f"{a.work}/{name}_startup.json"
        irw([main_ir, "--startup", startup_ir, "--emit", "paddle-json", "-o", mj,
             "--startup-out", sj], a.irw)
        check(text(load(mj)) == open(main_ir).read() and text(load(sj)) == open(startup_ir).read(),
              f"Paddle prints irw's JSON of {name} (main, startup) exactly as the fixture")
        same = irw([mj], a.irw).stdout == open(main_ir).read()
        same = same and irw([sj], a.irw).stdout == open(startup_ir).read()
        check(same, f"irw reads its JSON of {name} back to the fixture's text")
        check(round_trip(mj, sj, f"{a.work}/{name}_rt", a.irw),
              f"JSON -> irw -> JSON of {name}: Paddle prints the same main and startup")

    name = DIST_TRAINED
    num = json.load(open(f"{fx}/{name}.numerics.json"))
    k = num["k_steps"]
    want = {n: np.array(v, dtype=np.float32) for n, v in num["params_after_full_batch_step"].items()}
    init = {n: np.array(e["values"], dtype=np.float32) for n, e in num["params_init"].items()}
    mj, sj = f"{a.work}/{name}_main.json", f"{a.work}/{name}_startup.json"
    print(f"\n== {name}: Paddle trains irw's dist JSON (apply_dist2dense_pass + Executor)")
    params, _, _ = train_dist(mj, sj, num, 1, place)
    diff = max(float(np.abs(params[n] - want[n]).max()) for n in want)
    moved = max(float(np.abs(want[n] - init[n]).max()) for n in want)
    print(f"before, one full-batch step: max |params - fixture's params_after_full_batch_step| "
          f"= {diff:.3g} (parameters moved by up to {moved:.3g})")
    check(moved > 1e-3, "the fixture's step moves the parameters")
    check(diff <= ATOL, f"irw's JSON of {name}_before trains to the fixture's numbers within {ATOL}")

    gm_m, gm_s = f"{a.work}/{name}_gm_main.json", f"{a.work}/{name}_gm_startup.json"
    irw([mj, "--startup", sj, "--rules", os.path.join(a.repo, "rules", "grad_merge.rw"),
         "--set", f"k_steps={k}", "--emit", "paddle-json", "-o", gm_m, "--startup-out", gm_s],
        a.irw)
    params, n_buffers, left = train_dist(gm_m, gm_s, num, k, place)
    diff = max(float(np.abs(params[n] - want[n]).max()) for n in want)
    ref = num["gradient_merge_reference"]["params_after_gm_step"]
    diff_ref = max(float(np.abs(params[n] - np.array(ref[n], dtype=np.float32)).max()) for n in ref)
    print(f"irw --rules grad_merge.rw --set k_steps={k} on irw's JSON, Engine schedule "
          f"({k - 1} micro-batch(es) without op_role 2, then all): max |params - full-batch step| "
          f"= {diff:.3g}, max |params - Paddle's own gradient-merge step| = {diff_ref:.3g}; "
          f"{n_buffers} merge buffers, largest |value| left {left:.3g}")
    check(n_buffers == len(want), "every parameter has a @GRAD@MERGE buffer in Paddle's scope")
    check(left == 0.0, "the merge buffers are zero after the optimizer step")
    check(diff <= ATOL, f"irw's gradient-merged {name} trains to the full-batch step within {ATOL}")
    check(diff_ref <= ATOL, f"... and to Paddle's own gradient-merge step within {ATOL}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--irw", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--fixtures", required=True, help="shared/fixtures directory")
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    fx_text, fx_json = f"{a.fixtures}/paddle", f"{a.fixtures}/paddle-json"
    place = paddle.CPUPlace()
    print(f"paddle {paddle.__version__} ({paddle.version.commit[:12]}), irw {a.irw}")

    print("\n== JSON -> irw -> JSON round trip of the paddle-json fixtures")
    for m, s in [("main.json", "startup.json"), ("startup_gm.json", None)]:
        same = round_trip(f"{fx_json}/{m}", f"{fx_json}/{s}" if s else None,
                          f"{a.work}/fixture_{m[:-5]}", a.irw)
        check(same, f"Paddle prints irw's rewrite of {m}{' + ' + s if s else ''} as it prints the original")
    r = irw([f"{fx_json}/main.json"], a.irw)
    check(r.stdout == open(f"{fx_text}/before.ir").read(), "irw prints main.json exactly as before.ir")
    r = irw([f"{fx_json}/startup.json"], a.irw)
    check(r.stdout == open(f"{fx_text}/startup_before.ir").read(),
          "irw prints startup.json exactly as startup_before.ir")

    for opt in ["sgd", "adam"]:
        sfx = "" if opt == "sgd" else "_adam"
        print(f"\n== {opt.upper()}")
        main_p, startup_p = build(opt)
        check(text(main_p) == open(f"{fx_text}/before{sfx}.ir").read(),
              f"Paddle's program prints as before{sfx}.ir")
        check(text(startup_p) == open(f"{fx_text}/startup_before{sfx}.ir").read(),
              f"Paddle's startup prints as startup_before{sfx}.ir")
        mj, sj = f"{a.work}/{opt}_main.json", f"{a.work}/{opt}_startup.json"
        serialize(main_p, mj)
        serialize(startup_p, sj)
        check(round_trip(mj, sj, f"{a.work}/{opt}_rt", a.irw),
              "JSON -> irw -> JSON: Paddle prints the same main and startup")
        r = irw([mj], a.irw)
        check(r.stdout == open(f"{fx_text}/before{sfx}.ir").read(),
              f"irw prints Paddle's JSON exactly as before{sfx}.ir")

        gm_main, gm_startup, how = grad_merge(opt, mj, sj, a.work, a.irw, a.repo, fx_text)
        print(f"gradient merge: {how}")
        gm_m, gm_s = load(gm_main), load(gm_startup)
        data = batches()
        init, ref_losses, ref_params = train_full(load(mj), load(sj), data, place)
        init_diff, gm_losses, gm_params = train_engine(gm_m, gm_s, data, place, init)
        print(f"original, full batches:   losses {[f'{x:.6f}' for x in ref_losses]}")
        print(f"irw's gradient merge k={K}: losses {[f'{x:.6f}' for x in gm_losses]} (mean of micro-batch losses)")
        print(f"initial parameters from irw's startup vs original: max |diff| = {init_diff:.3g}"
              " (the original's were loaded for the comparison)")
        diff = max(float(np.abs(gm_params[n] - ref_params[n]).max()) for n in ref_params)
        moved = max(float(np.abs(ref_params[n] - init[n]).max()) for n in ref_params)
        print(f"parameters after {STEPS} steps: max |irw gm - original| = {diff:.3g} "
              f"(parameters moved by up to {moved:.3g})")
        check(moved > 1e-3, "training moved the parameters")
        check(diff <= ATOL, f"parameters agree within {ATOL}")
        loss_diff = max(abs(p - q) for p, q in zip(gm_losses, ref_losses))
        check(loss_diff <= ATOL, f"losses agree within {ATOL} (max |diff| {loss_diff:.3g})")

    dist_programs(a, place)

    print()
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed")
        sys.exit(1)
    print("all interop checks passed")


if __name__ == "__main__":
    main()
