"""Paddle 3.3.1 trains irw's JSON of the paddle-zoo models (../shared/fixtures/paddle-zoo).

For each model M: irw writes `--emit paddle-json` of the original (M_before.ir) and of Paddle's
own gradient-merge output (M_after.ir), each with its startup program; Paddle loads both, sets
every persistable to the fixture's `state_init` (M.feed.json), and runs the zoo README's Engine
schedule: the original one step on the full batch, to `state_after_full_batch_step`; Paddle's
pass output k-1 micro-batches without its op_role 2 ops and one through the whole program, with
the sequential executor, to `state_after_paddle_pass_sequential`. Tolerance as the README:
|a - b| <= 1e-5 |b| + 1e-5 max|b| per tensor.

usage: python zoo_json.py IRW_BIN FIXTURES_DIR WORK_DIR     (run by paddle.sh)
"""
import json
import os
import subprocess
import sys

os.environ.setdefault("FLAGS_new_executor_sequential_run", "1")
import numpy as np  # noqa: E402
import paddle  # noqa: E402

paddle.enable_static()
IRW, FX, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
MODELS = os.environ.get("ZOO_MODELS", "lenet_momentum transformer_adamw mlp_clip_adam").split()


def to_json(m, which):
    main, startup = f"{WORK}/{m}_{which}.json", f"{WORK}/{m}_startup_{which}.json"
    subprocess.run(
        [IRW, f"{FX}/{m}_{which}.ir", "--startup", f"{FX}/{m}_startup_{which}.ir",
         "--emit", "paddle-json", "-o", main, "--startup-out", startup],
        check=True,
    )
    progs = []
    for p in (main, startup):
        prog = paddle.static.Program()
        paddle.base.core.deserialize_pir_program(p, prog, -1)
        progs.append(prog)
    return progs


def tensor(v):
    """`{shape, dtype, values}` (the fixtures' layout) as an array."""
    if isinstance(v, dict):
        return np.array(v["values"], dtype=v["dtype"]).reshape(v["shape"])
    return np.array(v)


def without_role(prog, role):
    p = prog.clone()
    for op in reversed(list(p.global_block().ops)):
        if op.has_attr("op_role") and op.op_role == role:
            op.erase()
    return p


def train(main, startup, feed, k):
    scope = paddle.static.Scope()
    place = paddle.CPUPlace()
    with paddle.static.scope_guard(scope):
        exe = paddle.static.Executor(place)
        exe.run(startup)
        for n, v in feed["state_init"].items():
            var = scope.find_var(n)
            if var is not None:
                var.get_tensor().set(tensor(v), place)
        # Integral inputs are labels (int64), the others float32.
        inputs = {n: tensor(v) for n, v in feed["inputs"].items()}
        inputs = {n: v.astype("int64" if v.dtype.kind in "iu" else "float32") for n, v in inputs.items()}
        if k == 1:
            exe.run(main, feed=inputs)
        else:
            skip = without_role(main, 2)
            rows = len(next(iter(inputs.values()))) // k
            for i in range(k):
                part = {n: v[i * rows:(i + 1) * rows] for n, v in inputs.items()}
                exe.run(skip if i < k - 1 else main, feed=part)
        return lambda n: np.array(scope.find_var(n).get_tensor()) if scope.find_var(n) else None


def compare(get, want, names, label):
    bad = []
    for n in names:
        b = tensor(want[n]).astype("float64")
        a = get(n)
        if a is None:
            bad.append(f"{n}: missing")
            continue
        a = a.astype("float64").reshape(b.shape)
        tol = 1e-5 * np.abs(b) + 1e-5 * np.abs(b).max()
        if not np.all(np.abs(a - b) <= tol):
            bad.append(f"{n}: max |diff| {np.abs(a - b).max():.3g}")
    print(f"{label}: {len(names) - len(bad)}/{len(names)} tensors match" + ("" if not bad else f"; {bad[:3]}"))
    return not bad


ok = True
for m in MODELS:
    num = json.load(open(f"{FX}/{m}.numerics.json"))
    feed = json.load(open(f"{FX}/{m}.feed.json"))
    names = list(dict.fromkeys(num["compare_params"] + num["compare_state"]))
    main, startup = to_json(m, "before")
    ok &= compare(train(main, startup, feed, 1), num["state_after_full_batch_step"],
                  [n for n in names if n in num["state_after_full_batch_step"]], f"{m} original, full batch")
    main, startup = to_json(m, "after")
    ok &= compare(train(main, startup, feed, num["k_steps"]), num["state_after_paddle_pass_sequential"],
                  [n for n in names if n in num["state_after_paddle_pass_sequential"]], f"{m} Paddle's pass output, Engine schedule")
print("zoo: OK" if ok else "zoo: FAILED")
sys.exit(0 if ok else 1)
