"""Records the program of tests/exec_fixtures/misc/ with Paddle 3.3.1 (CPU): one small
static-graph training program that reaches the kernels real programs used and the executor
lacked (`norm` and its grad, `index_add` and its grads, `repeat_interleave` with an int and with
a tensor of repeats and their grads, `share_data_`, and `increment_` of a persistable step
counter), trained one step by SGD, with Paddle's own full-batch loss, gradients and step. Run
once; the files are committed and Paddle is not a dependency of the tests.

Input [8 rows, 6 features], data from numpy.random.RandomState(5); the data op declares a free
batch (-1). Op roles as the Engine sets them: forward 0, backward 1, optimizer 2.

usage: python tests/interop/misc_fixtures.py OUT_DIR     (with the interop venv's python)
"""
import json
import os
import sys

os.environ.setdefault("FLAGS_new_executor_sequential_run", "1")
import numpy as np  # noqa: E402
import paddle  # noqa: E402
from paddle import _C_ops  # noqa: E402

paddle.enable_static()
OUT = sys.argv[1]
BATCH = 8
MODEL = "misc_sgd"


def enc(a):
    a = np.asarray(a)
    vals = a.astype(np.float64).ravel().tolist() if a.dtype.kind == "f" else a.ravel().tolist()
    return {"shape": list(a.shape), "dtype": str(a.dtype), "values": vals}


def build():
    paddle.seed(1)
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [-1, 6], "float32")
        h = paddle.nn.Linear(6, 4)(x)
        # norm: each row of h divided by its l2 norm (axis 1)
        n, _ = _C_ops.norm(h, 1, 1e-10, False)
        # index_add: the rows of a parameter added into rows 0, 2 and 0 again of the normalized h
        v = paddle.create_parameter([3, 4], "float32")
        ia = paddle.index_add(n, paddle.to_tensor(np.array([0, 2, 0], "int64")), 0, v)
        # repeat_interleave: every column twice, then columns repeated 1, 0, 2, 1 times
        r1 = paddle.repeat_interleave(ia, 2, axis=1)
        r2 = paddle.repeat_interleave(h, paddle.to_tensor(np.array([1, 0, 2, 1], "int64")), axis=1)
        # share_data_ of a value with no gradient: an alias
        s = _C_ops.share_data_(x)
        loss = (r1 * r1).mean() + 0.5 * (r2 * r2).mean() + 0.1 * s.mean()
        # a persistable step counter, incremented in place once per step (a parameter outside the
        # loss: Paddle 3.3.1's create_global_var fails under PIR)
        step = paddle.create_parameter(
            [1], "float32", name="step", default_initializer=paddle.nn.initializer.Constant(0.0))
        step.stop_gradient = True
        paddle.increment(step, 1.0)

        def mark(role):
            for op in main.global_block().ops:
                if op.op_role == -1:
                    op.op_role = role

        mark(0)
        params_grads = [(p, g) for p, g in paddle.static.append_backward(loss) if g is not None]
        mark(1)
        paddle.optimizer.SGD(0.1).apply_gradients(params_grads)
        mark(2)
    return main, startup, loss, params_grads


def record():
    main, startup, loss, params_grads = build()
    rs = np.random.RandomState(5)
    inputs = {"x": rs.randn(BATCH, 6).astype("float32")}
    scope = paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        state_init = {}
        for n in sorted(scope.local_var_names()):
            try:
                a = np.array(scope.find_var(n).get_tensor())
            except Exception:  # not a dense tensor
                continue
            if a.size:
                state_init[n] = enc(a)
        fetched = exe.run(main, feed=inputs, fetch_list=[loss] + [g for _, g in params_grads])
        names = [p.name for p, _ in params_grads]
        after = {n: enc(np.array(scope.find_var(n).get_tensor())) for n in state_init}
    with open(f"{OUT}/{MODEL}.ir", "w") as f:
        f.write(str(main))
    with open(f"{OUT}/{MODEL}_startup.ir", "w") as f:
        f.write(str(startup))
    with open(f"{OUT}/{MODEL}.feed.json", "w") as f:
        json.dump({"note": f"{MODEL}: the full batch of {BATCH} rows and every persistable after "
                   "the startup program ran (Paddle 3.3.1)",
                   "inputs": {n: enc(v) for n, v in inputs.items()}, "state_init": state_init}, f)
    with open(f"{OUT}/{MODEL}.numerics.json", "w") as f:
        json.dump({"model": MODEL, "paddle": paddle.__version__, "batch": BATCH,
                   "loss_full_batch": float(fetched[0]),
                   "grads_full_batch": {n: enc(g) for n, g in zip(names, fetched[1:])},
                   "state_after_full_batch_step": after}, f)
    print(MODEL, "loss", float(fetched[0]), len(names), "gradients", sorted(after))


record()
