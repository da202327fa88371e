"""Three token-mean language models built by Paddle 3.3.1, for training irw's
`grad_merge.rw --set normalize=tokens` merge in Paddle (tests/interop/zoo.sh).

The losses are the mean over the real tokens of a padded batch, sum(l·mask) / sum(mask), with
`mask` a fed float32 input: the form `token_mean_loss` in rules/grad_merge.rw merges exactly.
- `tied_lm_adam`: Embedding(12, 8) whose weight is also the output projection (its gradient is
  the sum of two uses), Linear, tanh; Adam(0.01).
- `gru_tokmean_adam`: Embedding, GRU, Linear; Adam(0.01). The GRU's unused final state is seeded
  with zeros by `append_backward` (a `full_like(h, 0)` in the backward stage besides the loss's
  `full_like(loss, 1)`).
- `gru_ignore_index_sgd`: the same network with Paddle's own token mean,
  `F.cross_entropy(logits, labels.unsqueeze(-1), ignore_index=0)` with padding labelled 0
  (sum(ce) / (n + [n == 0]), no mask input: `token_mean_loss_ignore_index`); SGD(0.1,
  weight_decay=0.01), so the gradients reach the optimizers through the L2Decay chain.
Full batch 8 rows of 5 tokens with 5, 2, 4, 1, 5, 3, 5, 2 real ones (the micro-batches of 2
rows hold different token counts, so averaging the micro-batch gradients would be wrong). Op
roles as the Engine sets them (forward 0, backward 1, optimize 2).

Writes into paddle_tokens/, per model M: M.json, M_startup.json (serialize_pir_program),
M.feed.json (inputs and every persistable after the startup program) and M.numerics.json
(Paddle's full-batch step: `state_after_full_batch_step`, and which names to compare).

    python tests/data/paddle_token_mean.py [MODEL...]   # in a venv with paddlepaddle==3.3.1
"""
import json
import os
import sys

os.environ.setdefault("FLAGS_new_executor_sequential_run", "1")
import numpy as np  # noqa: E402
import paddle  # noqa: E402
import paddle.nn.functional as F  # noqa: E402

paddle.enable_static()
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "paddle_tokens")
B, T, H, V = 8, 5, 8, 12
LENS = [5, 2, 4, 1, 5, 3, 5, 2]


def enc(a):
    a = np.asarray(a)
    vals = a.astype(np.float64).ravel().tolist() if a.dtype.kind == "f" else a.ravel().tolist()
    return {"shape": list(a.shape), "dtype": str(a.dtype), "values": vals}


def model(name, rs):
    tok = paddle.static.data("tok", [-1, T], "int64")
    if name != "gru_ignore_index_sgd":
        lab = paddle.static.data("lab", [-1, T, 1], "int64")
        mask = paddle.static.data("mask", [-1, T, 1], "float32")
    emb = paddle.nn.Embedding(V, H)
    if name == "tied_lm_adam":
        lin = paddle.nn.Linear(H, H)
        logits = paddle.matmul(paddle.tanh(lin(emb(tok))), emb.weight, transpose_y=True)
    else:
        gru = paddle.nn.GRU(H, H)
        head = paddle.nn.Linear(H, V)
        out, _ = gru(emb(tok))
        logits = head(out)
    t = rs.randint(1, V, size=(B, T)).astype("int64")
    for i, n in enumerate(LENS):
        t[i, n:] = 0
    if name == "gru_ignore_index_sgd":
        # The labels of padding are ignore_index: Paddle's own token mean, no mask input.
        labels = paddle.static.data("labels", [-1, T], "int64")
        loss = F.cross_entropy(logits, labels.unsqueeze(-1), ignore_index=0)
        lab = rs.randint(1, V, size=(B, T)).astype("int64")
        lab[t == 0] = 0
        return loss, {"tok": t, "labels": lab}, paddle.optimizer.SGD(0.1, weight_decay=0.01)
    per_token = F.cross_entropy(logits, lab, reduction="none")
    loss = (per_token * mask).sum() / mask.sum()
    inputs = {"tok": t, "lab": rs.randint(0, V, size=(B, T, 1)).astype("int64"),
              "mask": (t > 0).astype("float32")[..., None]}
    return loss, inputs, paddle.optimizer.Adam(0.01)


def build(name):
    paddle.seed(2024)
    rs = np.random.RandomState(2024)
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        loss, inputs, opt = model(name, rs)

        def mark(role):
            for op in main.global_block().ops:
                if op.op_role == -1:
                    op.op_role = role

        mark(0)
        params_grads = [(p, g) for p, g in paddle.static.append_backward(loss) if g is not None]
        mark(1)
        opt.apply_gradients(params_grads)
        mark(2)
    return main, startup, params_grads, inputs


def record(name):
    main, startup, params_grads, inputs = build(name)
    scope = paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        state_init = {}
        for n in sorted(scope.local_var_names()):
            try:
                a = np.array(scope.find_var(n).get_tensor())
            except Exception:
                continue
            if a.size:
                state_init[n] = enc(a)
        exe.run(main, feed=inputs)
        after = {n: enc(np.array(scope.find_var(n).get_tensor())) for n in state_init}
    params = [p.name for p, _ in params_grads]
    paddle.base.core.serialize_pir_program(main, f"{OUT}/{name}.json", True, False, True)
    paddle.base.core.serialize_pir_program(startup, f"{OUT}/{name}_startup.json", True, False, True)
    with open(f"{OUT}/{name}.feed.json", "w") as f:
        json.dump({"inputs": {n: enc(v) for n, v in inputs.items()}, "state_init": state_init}, f)
    with open(f"{OUT}/{name}.numerics.json", "w") as f:
        json.dump({"model": name, "paddle": paddle.__version__,
                   "state_after_full_batch_step": after, "compare_params": params,
                   "compare_state": sorted(n for n in after if n not in params)}, f)
    print(name, len(params), "parameters,", len(main.global_block().ops), "ops")


os.makedirs(OUT, exist_ok=True)
for m in sys.argv[1:] or ("tied_lm_adam", "gru_tokmean_adam", "gru_ignore_index_sgd"):
    record(m)
