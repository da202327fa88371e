"""Small vision models built by Paddle 3.3.1 around the ops irw's executor learned last, for
`irw check` end to end (tests/golden/cnn/*_check_passes.test): each trains one SGD step, and
the gradient merge of rules/grad_merge.rw must reproduce it.

- `convt_gen_sgd`: a generator: Conv2DTranspose(4, 6, 3, stride 2, padding 1, output_padding 1),
  relu, a depthwise Conv2DTranspose(6, 6, 3, groups 6, padding 1) (Paddle emits
  `depthwise_conv2d_transpose` for it), MSE against a fed target; SGD(0.05).
- `maxpool_mask_sgd`: Conv2D(3, 4, 3), MaxPool2D(3, stride 2, padding 1, return_mask=True),
  an adaptive max pool with mask to 2x2 (both `max_pool2d_with_index`), Linear, MSE; SGD(0.05).
- `shuffle_unfold_maxout_sgd`: Conv2D(2, 8, 3, padding 1), PixelShuffle(2), PixelUnshuffle(2),
  Maxout(groups 2), Unfold(3, stride 2, padding 1), Linear, MSE; SGD(0.05).
- `pool3d_sgd`: a per-channel scale parameter, relu, MaxPool3D(2, stride 2, 6 paddings),
  AvgPool3D((2, 3, 2), padding 1, exclusive=False) (both `pool3d`), Linear, MSE; SGD(0.05).
Full batch 8 rows. Op roles as the Engine sets them (forward 0, backward 1, optimize 2).

Writes into paddle_vision/, per model M: M.json, M_startup.json (serialize_pir_program),
M.feed.json (inputs and every persistable after the startup program) and M.numerics.json
(Paddle's full-batch step: `state_after_full_batch_step`, and which names to compare).

    python tests/data/paddle_vision.py     # in a venv with paddlepaddle==3.3.1
"""
import json
import os

os.environ.setdefault("FLAGS_new_executor_sequential_run", "1")
import numpy as np  # noqa: E402
import paddle  # noqa: E402
import paddle.nn as nn  # noqa: E402
import paddle.nn.functional as F  # noqa: E402

paddle.enable_static()
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "paddle_vision")
B = 8


def enc(a):
    a = np.asarray(a)
    vals = a.astype(np.float64).ravel().tolist() if a.dtype.kind == "f" else a.ravel().tolist()
    return {"shape": list(a.shape), "dtype": str(a.dtype), "values": vals}


def convt_gen_sgd(rs):
    z = paddle.static.data("z", [-1, 4, 3, 3], "float32")
    target = paddle.static.data("target", [-1, 6, 6, 6], "float32")
    up = nn.Conv2DTranspose(4, 6, 3, stride=2, padding=1, output_padding=1)
    dw = nn.Conv2DTranspose(6, 6, 3, padding=1, groups=6)
    loss = F.mse_loss(dw(F.relu(up(z))), target)
    inputs = {"z": rs.randn(B, 4, 3, 3).astype("float32"),
              "target": rs.randn(B, 6, 6, 6).astype("float32")}
    return loss, inputs


def maxpool_mask_sgd(rs):
    x = paddle.static.data("x", [-1, 3, 9, 9], "float32")
    y = paddle.static.data("y", [-1, 3], "float32")
    conv = nn.Conv2D(3, 4, 3)
    pool = nn.MaxPool2D(3, stride=2, padding=1, return_mask=True)
    h, _ = pool(F.relu(conv(x)))
    h, _ = F.adaptive_max_pool2d(h, 2, return_mask=True)
    loss = F.mse_loss(nn.Linear(16, 3)(paddle.flatten(h, 1)), y)
    inputs = {"x": rs.randn(B, 3, 9, 9).astype("float32"),
              "y": rs.randn(B, 3).astype("float32")}
    return loss, inputs


def shuffle_unfold_maxout_sgd(rs):
    x = paddle.static.data("x", [-1, 2, 4, 4], "float32")
    y = paddle.static.data("y", [-1, 2], "float32")
    h = nn.PixelShuffle(2)(nn.Conv2D(2, 8, 3, padding=1)(x))      # [B, 2, 8, 8]
    h = nn.Maxout(2)(nn.PixelUnshuffle(2)(h))                    # [B, 4, 4, 4]
    h = nn.Unfold(3, strides=2, paddings=1)(h)                   # [B, 36, 4]
    loss = F.mse_loss(nn.Linear(144, 2)(paddle.flatten(h, 1)), y)
    inputs = {"x": rs.randn(B, 2, 4, 4).astype("float32"),
              "y": rs.randn(B, 2).astype("float32")}
    return loss, inputs


def pool3d_sgd(rs):
    x = paddle.static.data("x", [-1, 2, 4, 6, 6], "float32")
    y = paddle.static.data("y", [-1, 3], "float32")
    scale = paddle.create_parameter([1, 2, 1, 1, 1], "float32",
                                    default_initializer=nn.initializer.Constant(1.5))
    h = nn.MaxPool3D(2, stride=2, padding=[1, 0, 1, 0, 0, 1])(F.relu(x * scale))   # [B, 2, 2, 3, 3]
    h = nn.AvgPool3D((2, 3, 2), stride=1, padding=1, exclusive=False)(h)        # [B, 2, 3, 3, 4]
    loss = F.mse_loss(nn.Linear(72, 3)(paddle.flatten(h, 1)), y)
    inputs = {"x": rs.randn(B, 2, 4, 6, 6).astype("float32"),
              "y": rs.randn(B, 3).astype("float32")}
    return loss, inputs


MODELS = {"convt_gen_sgd": convt_gen_sgd, "maxpool_mask_sgd": maxpool_mask_sgd,
          "shuffle_unfold_maxout_sgd": shuffle_unfold_maxout_sgd, "pool3d_sgd": pool3d_sgd}


def build(name):
    paddle.seed(2024)
    rs = np.random.RandomState(2024)
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        loss, inputs = MODELS[name](rs)

        def mark(role):
            for op in main.global_block().ops:
                if op.op_role == -1:
                    op.op_role = role

        mark(0)
        params_grads = [(p, g) for p, g in paddle.static.append_backward(loss) if g is not None]
        mark(1)
        paddle.optimizer.SGD(0.05).apply_gradients(params_grads)
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
    ops = [op.name() for op in main.global_block().ops]
    print(name, len(params), "parameters,", len(ops), "ops:",
          sorted({o for o in ops if "pool" in o or "conv" in o or o in (
              "pd_op.pixel_shuffle", "pd_op.pixel_unshuffle", "pd_op.unfold", "pd_op.maxout")}))


os.makedirs(OUT, exist_ok=True)
for m in MODELS:
    record(m)
