"""Paddle 3.3.1 trains irw's JSON of the recurrent programs (tests/exec_fixtures/rnn/).

For each model M (lstm_adam, gru_sgd): irw writes `--emit paddle-json` of M.ir with its startup,
and of its gradient merge (`--rules rules/grad_merge.rw --set k_steps=4`); Paddle loads both,
sets every persistable to M.feed.json's `state_init`, and trains: the original one step on the
full batch of 8 rows, the merged program the Engine way (3 micro-batches of 2 rows without its
op_role 2 ops, then one through the whole program; sequential executor). Every tensor of
`state_after_full_batch_step` (Paddle's own step of the program it built) must be matched
within |a - b| <= 1e-5 |b| + 1e-5 max|b|, and every @GRAD@MERGE buffer be zero afterwards.

usage: python rnn_json.py IRW_BIN REPO WORK_DIR     (run by paddle.sh)
"""
import json
import os
import subprocess
import sys

os.environ.setdefault("FLAGS_new_executor_sequential_run", "1")
import numpy as np  # noqa: E402
import paddle  # noqa: E402

paddle.enable_static()
IRW, REPO, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
FX = f"{REPO}/tests/exec_fixtures/rnn"
K = 4


def to_json(m, rules):
    tag = "gm" if rules else "orig"
    main, startup = f"{WORK}/{m}_{tag}.json", f"{WORK}/{m}_startup_{tag}.json"
    args = [IRW, f"{FX}/{m}.ir", "--startup", f"{FX}/{m}_startup.ir"]
    if rules:
        args += ["--rules", f"{REPO}/rules/grad_merge.rw", "--set", f"k_steps={K}"]
    subprocess.run(args + ["--emit", "paddle-json", "-o", main, "--startup-out", startup],
                   check=True)
    progs = []
    for p in (main, startup):
        prog = paddle.static.Program()
        paddle.base.core.deserialize_pir_program(p, prog, -1)
        progs.append(prog)
    return progs


def tensor(v):
    return np.array(v["values"], dtype=v["dtype"]).reshape(v["shape"])


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
            if var is None:
                raise SystemExit(f"rnn_json.py: the program has no persistable `{n}`")
            var.get_tensor().set(tensor(v), place)
        inputs = {n: tensor(v) for n, v in feed["inputs"].items()}
        if k == 1:
            exe.run(main, feed=inputs)
        else:
            skip = without_role(main, 2)
            rows = len(next(iter(inputs.values()))) // k
            for i in range(k):
                part = {n: v[i * rows:(i + 1) * rows] for n, v in inputs.items()}
                exe.run(skip if i < k - 1 else main, feed=part)
        state, bufs = {}, {}
        for n in scope.local_var_names():
            try:
                a = np.array(scope.find_var(n).get_tensor())
            except Exception:  # not a dense tensor
                continue
            (bufs if n.endswith("@GRAD@MERGE") else state)[n] = a
        return state, bufs


def compare(state, bufs, want, label, k):
    bad, worst = [], 0.0
    for n, w in want.items():
        b = tensor(w).astype("float64")
        if n not in state:
            bad.append(f"{n}: missing")
            continue
        a = state[n].astype("float64").reshape(b.shape)
        tol = 1e-5 * np.abs(b) + 1e-5 * np.abs(b).max()
        worst = max(worst, float((np.abs(a - b) / np.where(tol > 0, tol, 1e-30)).max()))
        if not np.all(np.abs(a - b) <= tol):
            bad.append(f"{n}: max |diff| {np.abs(a - b).max():.3g}")
    nonzero = sorted(n for n, v in bufs.items() if v.size and np.abs(v).max() != 0)
    ok = not bad and not nonzero and (k == 1 or bool(bufs))
    print(f"{label}: {len(want) - len(bad)}/{len(want)} tensors match, worst {worst:.3f} of "
          f"tolerance; {len(bufs)} merge buffers, not zero: {nonzero}"
          + ("" if not bad else f"; {bad[:3]}"))
    return ok


ok = True
for m in ("lstm_adam", "gru_sgd"):
    num = json.load(open(f"{FX}/{m}.numerics.json"))
    feed = json.load(open(f"{FX}/{m}.feed.json"))
    want = num["state_after_full_batch_step"]
    main, startup = to_json(m, False)
    ok &= compare(*train(main, startup, feed, 1), want, f"{m}: irw's JSON, full batch", 1)
    main, startup = to_json(m, True)
    ok &= compare(*train(main, startup, feed, K), want,
                  f"{m}: irw's gradient merge k={K}, Engine schedule", K)
print("rnn: OK" if ok else "rnn: FAILED")
sys.exit(0 if ok else 1)
