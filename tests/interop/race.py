"""One training window of a gradient-merged program in Paddle 3.3.1's DEFAULT (multi-threaded)
executor, compared with one full-batch step of the original. Adapted from the race
study's harness (../shared/paddle-race/scripts/pr2.py).

usage: race.py BEFORE_MAIN BEFORE_START AFTER_MAIN AFTER_START K FEED.json

Runs the original program once on the whole batch, and the merged program the Engine way: k-1
micro-batches with the optimize stage (op_role 2) removed, then the whole program on the last
micro-batch. Exit 0 when the parameters agree (relative 1e-5 of the parameter's scale), the
original reproduces the step Paddle recorded in FEED, and every `@GRAD@MERGE` buffer is zero
after the window; exit 1 otherwise (a lost update: the zeroing raced with a read). Any other
exit is an error of the harness. FLAGS_new_executor_sequential_run is left unset (the default
executor); set it to 1 to see the sequential control.
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


def params_of(prog):
    return [op.attrs()["parameter_name"] for op in prog.global_block().ops
            if op.name() == "builtin.parameter"]


def run(main_p, start_p, feed, micro):
    scope = paddle.static.Scope()
    exe = paddle.static.Executor(paddle.CPUPlace())
    with paddle.static.scope_guard(scope):
        exe.run(start_p)
        for n, t in feed["params_init"].items():
            v = scope.find_var(n)
            if v is not None:
                v.get_tensor().set(np.array(t["values"], "float32").reshape(t["shape"]),
                                   paddle.CPUPlace())
        names = list(feed["inputs"])
        data = {n: np.array(feed["inputs"][n]) for n in names}
        for n in names:
            if data[n].dtype == np.float64:
                data[n] = data[n].astype("float32")
        rows = len(data[names[0]])
        if micro == 1:
            exe.run(main_p, feed=data)
        else:
            b = rows // micro
            no_opt = main_p.clone()
            for op in list(no_opt.global_block().ops)[::-1]:
                if op.op_role == 2:
                    no_opt.global_block().remove_op(op)
            for i in range(micro):
                part = {n: d[i * b:(i + 1) * b] for n, d in data.items()}
                exe.run(main_p if i == micro - 1 else no_opt, feed=part)
        params = {n: np.array(scope.find_var(n).get_tensor()) for n in params_of(main_p)}
        bufs = {n: np.array(scope.find_var(n).get_tensor()) for n in scope.local_var_names()
                if n.endswith("@GRAD@MERGE")}
        return params, bufs


def main():
    bm, bs, am, as_, k, feed_path = sys.argv[1:7]
    feed = json.load(open(feed_path))
    ref, _ = run(load(bm), load(bs), feed, 1)
    got, bufs = run(load(am), load(as_), feed, int(k))
    nonzero = sorted(n for n, b in bufs.items() if np.abs(b).max() != 0)
    worst = 0.0
    for n, r in ref.items():
        scale = np.abs(r).max() or 1.0
        worst = max(worst, float((np.abs(got[n] - r) / (1e-5 * np.abs(r) + 1e-5 * scale)).max()))
    want = feed.get("params_after_full_batch_step", {})
    vs_paddle = max((float(np.abs(ref[n].ravel() - np.array(v)).max())
                     for n, v in want.items() if n in ref), default=-1)
    print(f"merged vs full batch: worst {worst:.3f} of tolerance; original vs recorded Paddle step "
          f"{vs_paddle:.2e}; {len(bufs)} buffers, not zero after the window: {nonzero}")
    sys.stdout.flush()
    ok = worst <= 1.0 and 0 <= vs_paddle < 1e-5 and bufs and not nonzero
    # os._exit: a glog-verbose run once died in a glibc abort at interpreter exit and hung.
    os._exit(0 if ok else 1)


if __name__ == "__main__":
    main()
