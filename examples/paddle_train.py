"""Gradient merge inside a Paddle training script, with irw's Python package.

Builds a paddle.nn.TransformerEncoderLayer training program (d_model 8, 2 heads, feed-forward 16,
no dropout, gelu; MSE loss; AdamW), merges it over k=4 micro-batches with
irw.paddle.gradient_merge(..., schedule="cond"), and trains it for 20 optimizer steps with a plain
paddle.static.Executor: one exe.run per micro-batch, nothing else (the merged program counts its
micro-steps and runs the optimizer on every 4th). Beside it, the original program trains on the
full batches (4 micro-batches at once). Prints the loss of each optimizer step of both (the
merged one: the mean of its 4 micro-batch losses) and exits 1 if they differ by more than 1e-5.

    pip install ./python paddlepaddle==3.3.1
    python examples/paddle_train.py
"""

import sys

import numpy as np
import paddle
from paddle.base.framework import pir_op_role_guard

import irw.paddle

K, MICRO, STEPS, SEQ, D = 4, 2, 20, 4, 8
paddle.enable_static()


def build():
    """The training program: forward, backward and optimizer ops with their op roles."""
    paddle.seed(2024)
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        with pir_op_role_guard(0):
            x = paddle.static.data("x", [-1, SEQ, D], "float32")
            y = paddle.static.data("y", [-1, SEQ, D], "float32")
            layer = paddle.nn.TransformerEncoderLayer(D, 2, 16, dropout=0.0, activation="gelu")
            loss = paddle.mean((layer(x) - y) ** 2)
            opt = paddle.optimizer.AdamW(learning_rate=0.01, weight_decay=0.01)
        with pir_op_role_guard(1):
            params_grads = opt.backward(loss)
        with pir_op_role_guard(2):
            opt._apply_optimize(loss, startup, params_grads)
    return main, startup, loss


def main():
    orig_main, orig_startup, loss = build()
    gm_main, gm_startup = irw.paddle.gradient_merge(orig_main, orig_startup, k_steps=K,
                                                     schedule="cond")
    # The merged program's loss: the same value, found by the op that computes it (the model's
    # only top-level mean; the merged program, read back from JSON, numbers its ops anew).
    means = [op for op in gm_main.global_block().ops if op.name() == "pd_op.mean"]
    assert len(means) == 1, [op.name() for op in means]
    gm_loss = means[0].result(0)

    rng = np.random.RandomState(0)
    xs = rng.randn(STEPS, K * MICRO, SEQ, D).astype("float32")
    ys = rng.randn(STEPS, K * MICRO, SEQ, D).astype("float32")
    exe = paddle.static.Executor(paddle.CPUPlace())

    full_scope, merged_scope = paddle.static.Scope(), paddle.static.Scope()
    with paddle.static.scope_guard(full_scope):
        exe.run(orig_startup)
        names = [n for n in full_scope.local_var_names()]
        init = {n: np.array(full_scope.find_var(n).get_tensor()) for n in names}
    with paddle.static.scope_guard(merged_scope):
        exe.run(gm_startup)
        for n, v in init.items():  # the same initial parameters and optimizer state
            var = merged_scope.find_var(n)
            if var is not None:
                var.get_tensor().set(v, paddle.CPUPlace())

    worst = 0.0
    print(f"{'step':>4}  {'full batch':>12}  {'irw cond k=4':>12}  {'|diff|':>9}")
    for s in range(STEPS):
        with paddle.static.scope_guard(full_scope):
            (full,) = exe.run(orig_main, feed={"x": xs[s], "y": ys[s]}, fetch_list=[loss])
        micro = []
        with paddle.static.scope_guard(merged_scope):
            for i in range(K):
                rows = slice(i * MICRO, (i + 1) * MICRO)
                (l,) = exe.run(gm_main, feed={"x": xs[s][rows], "y": ys[s][rows]},
                               fetch_list=[gm_loss])
                micro.append(float(l))
        merged = float(np.mean(micro))
        diff = abs(merged - float(full))
        worst = max(worst, diff)
        print(f"{s + 1:>4}  {float(full):>12.7f}  {merged:>12.7f}  {diff:>9.2e}")
    print(f"largest difference {worst:.2e} (tolerance 1e-5)")
    return 0 if worst <= 1e-5 else 1


if __name__ == "__main__":
    sys.exit(main())
