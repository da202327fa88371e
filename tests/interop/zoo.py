"""One training window of a gradient-merged paddle-zoo model in Paddle 3.3.1, compared with
Paddle's own full-batch step of the original (`state_after_full_batch_step` in the model's
numerics): parameters and every optimizer state.

usage: zoo.py MAIN.json STARTUP.json FEED.json NUMERICS.json K

Loads the programs (Paddle PIR JSON), runs the startup program, sets every persistable the feed's
`state_init` names, and trains the Engine way (the zoo README's schedule): K-1 micro-batches with
the optimize stage (op_role 2) removed, then one micro-batch through the whole program. With K=1
the whole batch goes through the program once (the original). Prints one line per compared
tensor (max absolute error, and the README's tolerance `1e-5*|b| + 1e-5*max|b|` as a fraction)
and exits 0 when every tensor is within it and every `@GRAD@MERGE` buffer (and the token count
`@GRAD_MERGE_TOKENS@` of a token-normalized merge) is zero after the window; 1 otherwise. The executor is Paddle's default (multi-threaded) unless the environment
sets FLAGS_new_executor_sequential_run=1.
"""
import json
import os
import sys

os.environ.setdefault("FLAGS_new_executor_sequential_run", "0")
import numpy as np  # noqa: E402
import paddle  # noqa: E402
from paddle.base import libpaddle  # noqa: E402

paddle.enable_static()


def load(path):
    p = paddle.static.Program()
    libpaddle.deserialize_pir_program(path, p, -1)
    return p


def array(t):
    return np.array(t["values"], dtype=t.get("dtype", "float32")).reshape(t["shape"])


def set_var(scope, name, value):
    v = scope.find_var(name)
    if v is None:
        return False
    v.get_tensor().set(value, paddle.CPUPlace())
    return True


def train(main_p, start_p, feed, k):
    scope = paddle.static.Scope()
    exe = paddle.static.Executor(paddle.CPUPlace())
    with paddle.static.scope_guard(scope):
        exe.run(start_p)
        for n, t in feed["state_init"].items():
            if not set_var(scope, n, array(t)):
                raise SystemExit(f"zoo.py: the program has no persistable `{n}`")
        data = {}
        for n, rows in feed["inputs"].items():
            # Nested rows, or a tensor written as {shape, dtype, values}.
            a = array(rows) if isinstance(rows, dict) else np.array(rows)
            data[n] = a.astype("float32") if a.dtype == np.float64 else a
        rows = len(next(iter(data.values())))
        if k == 1:
            exe.run(main_p, feed=data)
        else:
            b = rows // k
            no_opt = main_p.clone()
            for op in list(no_opt.global_block().ops)[::-1]:
                if op.op_role == 2:
                    no_opt.global_block().remove_op(op)
            for i in range(k):
                part = {n: d[i * b:(i + 1) * b] for n, d in data.items()}
                exe.run(main_p if i == k - 1 else no_opt, feed=part)
        state = {}
        bufs = {}
        for n in scope.local_var_names():
            v = scope.find_var(n)
            if v is None:
                continue
            try:
                a = np.array(v.get_tensor())
            except Exception:  # not a dense tensor (a scope's non-tensor variable)
                continue
            if n.endswith("@GRAD@MERGE") or n == "@GRAD_MERGE_TOKENS@":
                bufs[n] = a
            else:
                state[n] = a
        return state, bufs


def main():
    main_path, start_path, feed_path, num_path, k = sys.argv[1:6]
    feed = json.load(open(feed_path))
    num = json.load(open(num_path))
    want = num["state_after_full_batch_step"]
    names = list(dict.fromkeys(num["compare_params"] + num["compare_state"]))
    state, bufs = train(load(main_path), load(start_path), feed, int(k))
    ok = True
    worst = 0.0
    for n in names:
        b = array(want[n]).astype("float64")
        if n not in state:
            print(f"  {n}: missing from the trained scope")
            ok = False
            continue
        a = state[n].astype("float64").reshape(b.shape)
        err = np.abs(a - b)
        tol = 1e-5 * np.abs(b) + 1e-5 * (np.abs(b).max() if b.size else 0.0)
        frac = float((err / np.where(tol > 0, tol, 1e-30)).max()) if b.size else 0.0
        worst = max(worst, frac)
        bad = frac > 1.0
        ok = ok and not bad
        print(f"  {n}: max abs err {float(err.max()):.3e} ({frac:.3f} of tolerance)"
              f"{'  WRONG' if bad else ''}")
    nonzero = sorted(n for n, v in bufs.items() if v.size and np.abs(v).max() != 0)
    print(f"zoo: {len(names)} tensors, worst {worst:.3f} of tolerance; {len(bufs)} buffers, "
          f"not zero after the window: {nonzero}")
    sys.stdout.flush()
    ok = ok and not nonzero and (int(k) == 1 or bufs)
    os._exit(0 if ok else 1)


if __name__ == "__main__":
    main()
