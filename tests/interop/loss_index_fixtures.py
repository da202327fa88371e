"""Records the programs of tests/exec_fixtures/loss_index/ with Paddle 3.3.1 (CPU): one small
static-graph training program that reaches the norm, loss, indexing and ranking kernels through
Paddle's own Python API (einsum, F.normalize, F.nll_loss with class weights and an ignored label,
F.binary_cross_entropy, F.kl_div, paddle.topk, paddle.argmax, take_along_axis, put_along_axis,
gather_nd, paddle.linalg.norm), trained one step by two optimizers, with Paddle's own full-batch
loss, gradients and step. Run once; the files are committed and Paddle is not a dependency of
the tests.

  adadelta_l1: Adadelta(0.5) with an L1Decay(0.01) regularizer (the `sign` of every weight;
               the gradients recorded are the regularized ones the optimizer consumes)
  rprop:       Rprop(0.01)

Input [8 rows, 6 features], data from numpy.random.RandomState(3); the data ops declare a free
batch (-1). Op roles as the Engine sets them: forward 0, backward 1, optimizer 2.

usage: python tests/interop/loss_index_fixtures.py OUT_DIR     (with the interop venv's python)
"""
import json
import os
import sys

os.environ.setdefault("FLAGS_new_executor_sequential_run", "1")
import numpy as np  # noqa: E402
import paddle  # noqa: E402
import paddle.nn.functional as F  # noqa: E402

paddle.enable_static()
OUT = sys.argv[1]
BATCH = 8


def enc(a):
    a = np.asarray(a)
    vals = a.astype(np.float64).ravel().tolist() if a.dtype.kind == "f" else a.ravel().tolist()
    return {"shape": list(a.shape), "dtype": str(a.dtype), "values": vals}


def build(model):
    paddle.seed(1)
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [-1, 6], "float32")
        lab = paddle.static.data("lab", [-1], "int64")
        t = paddle.static.data("t", [-1, 4], "float32")
        idx = paddle.static.data("idx", [-1, 2], "int64")
        h = paddle.nn.Linear(6, 4)(x)
        mix = paddle.create_parameter([4, 4], "float32")
        h = paddle.einsum("bi,ij->bj", h, mix) + 0.1 * paddle.einsum("bi,bi->b", h, h).unsqueeze(1)
        logp = F.log_softmax(3 * F.normalize(h, axis=1))
        weight = paddle.to_tensor(np.array([1.0, 0.5, 2.0, 1.5], "float32"))
        loss = F.nll_loss(logp, lab, weight=weight)
        loss = loss + F.binary_cross_entropy(F.sigmoid(h), t)
        loss = loss + F.kl_div(logp, F.softmax(t), reduction="batchmean")
        top, _ = paddle.topk(h, 2, axis=1)
        loss = loss + 0.1 * top.sum()
        best = paddle.argmax(h, axis=1, keepdim=True)
        loss = loss + 0.1 * paddle.take_along_axis(h, best, axis=1).sum()
        put = paddle.put_along_axis(h, idx, paddle.ones([1], "float32"), 1, "add")
        loss = loss + 0.05 * (put * put).sum()
        pairs = paddle.to_tensor(np.array([[0, 1], [2, 3]], "int64"))
        loss = loss + 0.1 * paddle.gather_nd(h, pairs).sum()
        loss = loss + 0.01 * paddle.linalg.norm(h, p=1, axis=0).sum()

        def mark(role):
            for op in main.global_block().ops:
                if op.op_role == -1:
                    op.op_role = role

        mark(0)
        params_grads = [(p, g) for p, g in paddle.static.append_backward(loss) if g is not None]
        mark(1)
        if model == "adadelta_l1":
            # The regularization `Adadelta(weight_decay=L1Decay(0.01))` adds, appended here so
            # that the gradients recorded are the ones the optimizer consumes (with the decay).
            opt = paddle.optimizer.Adadelta(0.5)
            params_grads = opt.append_regularization_ops(params_grads, paddle.regularizer.L1Decay(0.01))
        else:
            opt = paddle.optimizer.Rprop(0.01)
        opt.apply_gradients(params_grads)
        mark(2)
    return main, startup, loss, params_grads


def record(model):
    main, startup, loss, params_grads = build(model)
    rs = np.random.RandomState(3)
    inputs = {"x": rs.randn(BATCH, 6).astype("float32"),
              "lab": rs.randint(0, 4, BATCH).astype("int64"),
              "t": rs.rand(BATCH, 4).astype("float32"),
              "idx": rs.randint(0, 4, (BATCH, 2)).astype("int64")}
    inputs["lab"][2] = -100  # nll_loss's default ignore_index
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


for m in ("adadelta_l1", "rprop"):
    record(m)
