"""Records the recurrent programs of tests/exec_fixtures/rnn/ with Paddle 3.3.1 (CPU): two small
static-graph training programs built from `paddle.nn.LSTM` and `paddle.nn.GRU`, as Paddle prints
them, with Paddle's own full-batch loss, gradients and step. Run once; the files are committed and
Paddle is not a dependency of the tests.

  lstm_adam: LSTM(4, 6, num_layers=2, direction="bidirect"), Linear(12, 3) head, MSE; Adam(0.01)
  gru_sgd:   GRU(4, 6, num_layers=2) with a per-row `sequence_length`, Linear(6, 3), MSE; SGD(0.1)

Input [8 rows, 5 steps, 4 features], data from numpy.random.RandomState(2024); the data ops
declare a free batch (-1), so the initial states are built from the input's shape (shape64,
slice, stack, full_with_tensor), as `paddle.nn.LSTM` does for a free batch. Op roles as the
Engine sets them: forward 0, backward 1, optimizer 2.

usage: python tests/interop/rnn_fixtures.py OUT_DIR     (with the interop venv's python)
"""
import json
import os
import sys

os.environ.setdefault("FLAGS_new_executor_sequential_run", "1")
import numpy as np  # noqa: E402
import paddle  # noqa: E402

paddle.enable_static()
OUT = sys.argv[1]
BATCH, STEPS, FEATURES, HIDDEN = 8, 5, 4, 6


def enc(a):
    a = np.asarray(a)
    vals = a.astype(np.float64).ravel().tolist() if a.dtype.kind == "f" else a.ravel().tolist()
    return {"shape": list(a.shape), "dtype": str(a.dtype), "values": vals}


def build(model):
    paddle.seed(2024)
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [-1, STEPS, FEATURES], "float32")
        y = paddle.static.data("y", [-1, STEPS, 3], "float32")
        if model == "lstm_adam":
            rnn = paddle.nn.LSTM(FEATURES, HIDDEN, num_layers=2, direction="bidirect")
            out, _ = rnn(x)
            head = paddle.nn.Linear(2 * HIDDEN, 3)
            extra = []
        else:
            lens = paddle.static.data("lens", [-1], "int32")
            rnn = paddle.nn.GRU(FEATURES, HIDDEN, num_layers=2)
            out, _ = rnn(x, sequence_length=lens)
            head = paddle.nn.Linear(HIDDEN, 3)
            extra = [lens]
        loss = paddle.mean((head(out) - y) ** 2)

        def mark(role):
            for op in main.global_block().ops:
                if op.op_role == -1:
                    op.op_role = role

        mark(0)
        opt = paddle.optimizer.Adam(0.01) if model == "lstm_adam" else paddle.optimizer.SGD(0.1)
        # The fused weight buffer `paddle.nn.LSTM` creates gets no gradient.
        params_grads = [(p, g) for p, g in paddle.static.append_backward(loss) if g is not None]
        mark(1)
        opt.apply_gradients(params_grads)
        mark(2)
    return main, startup, loss, params_grads, extra


def record(model):
    main, startup, loss, params_grads, extra = build(model)
    rs = np.random.RandomState(2024)
    inputs = {
        "x": rs.randn(BATCH, STEPS, FEATURES).astype("float32"),
        "y": rs.randn(BATCH, STEPS, 3).astype("float32"),
    }
    if extra:
        inputs["lens"] = np.array([5, 3, 1, 4, 5, 2, 5, 3], dtype="int32")
    scope = paddle.static.Scope()
    place = paddle.CPUPlace()
    with paddle.static.scope_guard(scope):
        exe = paddle.static.Executor(place)
        exe.run(startup)
        state_init = {}
        for n in sorted(scope.local_var_names()):
            v = scope.find_var(n)
            try:
                a = np.array(v.get_tensor())
            except Exception:  # not a dense tensor
                continue
            if a.size:  # zero-size buffers (the dropout state) are what the startup makes
                state_init[n] = enc(a)
        fetched = exe.run(main, feed=inputs, fetch_list=[loss] + [g for _, g in params_grads])
        names = [p.name for p, _ in params_grads]
        after = {n: enc(np.array(scope.find_var(n).get_tensor())) for n in state_init}
    with open(f"{OUT}/{model}.ir", "w") as f:
        f.write(str(main))
    with open(f"{OUT}/{model}_startup.ir", "w") as f:
        f.write(str(startup))
    with open(f"{OUT}/{model}.feed.json", "w") as f:
        json.dump({"note": f"{model}: the full batch of {BATCH} rows and every persistable after "
                   "the startup program ran (Paddle 3.3.1)",
                   "inputs": {n: enc(v) for n, v in inputs.items()}, "state_init": state_init}, f)
    with open(f"{OUT}/{model}.numerics.json", "w") as f:
        json.dump({"model": model, "paddle": paddle.__version__, "batch": BATCH,
                   "loss_full_batch": float(fetched[0]),
                   "grads_full_batch": {n: enc(g) for n, g in zip(names, fetched[1:])},
                   "state_after_full_batch_step": after}, f)
    print(model, "loss", float(fetched[0]), len(names), "gradients")


for m in ("lstm_adam", "gru_sgd"):
    record(m)
