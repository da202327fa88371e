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

Also `paddle_rnn_kernels.json`: the `rnn` op alone on the cells the programs do not use
(RNN_TANH, RNN_RELU), with its gradients (see `kernel_cases`).

usage: python tests/interop/rnn_fixtures.py OUT_DIR     (with the interop venv's python;
RNN_KERNEL_CASES_ONLY=1 writes only paddle_rnn_kernels.json)
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


def kernel_cases():
    """The `rnn` op alone (dynamic mode, float64) for the cells the programs above do not use:
    SimpleRNN with tanh and relu, 2 layers, bidirectional, sequence lengths 4 and 2; the loss
    `sum(out * G) + sum(h * S)` for random G, S, its gradients as Paddle's backward computes them,
    and the weights' gradients by central differences of Paddle's forward (eps 1e-6).
    `paddle_backward_wrong` lists the weights where the two disagree: Paddle 3.3.1's CPU
    `rnn_grad` gets the reverse direction's `w_hh` wrong when rows have different lengths."""
    paddle.disable_static()
    paddle.set_default_dtype("float64")
    cases = []
    for act in ("tanh", "relu"):
        paddle.seed(7)
        rs = np.random.RandomState(7)
        net = paddle.nn.SimpleRNN(3, 4, num_layers=2, direction="bidirect", activation=act,
                                  time_major=True)
        x = paddle.to_tensor(rs.randn(4, 2, 3), stop_gradient=False)
        h0 = paddle.to_tensor(rs.randn(4, 2, 4), stop_gradient=False)
        lens = paddle.to_tensor(np.array([4, 2], dtype="int32"))
        g_out = paddle.to_tensor(rs.randn(4, 2, 8))
        g_h = paddle.to_tensor(rs.randn(4, 2, 4))

        def objective():
            out, h = net(x, h0, sequence_length=lens)
            return out, h, (out * g_out).sum() + (h * g_h).sum()

        out, h, loss = objective()
        loss.backward()
        weights = net._all_weights
        numeric, wrong = [], []
        with paddle.no_grad():
            for k, w in enumerate(weights):
                v = w.numpy().copy()
                d = np.zeros(v.size)
                for e in range(v.size):
                    for sign in (1, -1):
                        p = v.copy()
                        p.ravel()[e] += sign * 1e-6
                        w.set_value(p)
                        d[e] += sign * float(objective()[2]) / 2e-6
                w.set_value(v)
                numeric.append(d.reshape(v.shape))
                if not np.allclose(w.grad.numpy(), numeric[-1], rtol=1e-5, atol=1e-6):
                    wrong.append(k)
        cases.append({
            "mode": "RNN_TANH" if act == "tanh" else "RNN_RELU",
            "input_size": 3, "hidden_size": 4, "num_layers": 2, "is_bidirec": True,
            "x": enc(x.numpy()), "h0": enc(h0.numpy()), "sequence_length": enc(lens.numpy()),
            "weight_list": [enc(w.numpy()) for w in weights],
            "out": enc(out.numpy()), "state": enc(h.numpy()),
            "out_grad": enc(g_out.numpy()), "state_grad": enc(g_h.numpy()),
            "x_grad": enc(x.grad.numpy()), "pre_state_grad": enc(h0.grad.numpy()),
            "weight_list_grad": [enc(w.grad.numpy()) for w in weights],
            "weight_list_grad_numeric": [enc(d) for d in numeric],
            "paddle_backward_wrong": wrong,
        })
        print(act, "weights where Paddle's backward disagrees with its forward:", wrong)
    with open(f"{OUT}/paddle_rnn_kernels.json", "w") as f:
        json.dump({"paddle": paddle.__version__, "cases": cases}, f)
    print(len(cases), "kernel cases")


if os.environ.get("RNN_KERNEL_CASES_ONLY") != "1":
    for m in ("lstm_adam", "gru_sgd"):
        record(m)
kernel_cases()
