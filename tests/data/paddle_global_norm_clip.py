"""Records Paddle 3.3.1's ClipGradByGlobalNorm as the oracle of rules/examples/global_norm_clip.rw.

Builds the model of ../shared/fixtures/paddle-zoo/mlp_clip_adam (Linear(6,16)-ReLU-Linear(16,3),
MSE, Adam(0.01)) twice, with op roles (forward, backward, optimize: each stage's new ops marked as it is built): once without clipping (the program
irw's rule file rewrites) and once with `grad_clip=ClipGradByGlobalNorm(0.1)` (Paddle's own
clip). Both run one full-batch step from the zoo's `state_init` on its inputs
(mlp_clip_adam.feed.json). Writes into tests/data/paddle_clip/:

  mlp_adam_before.ir, mlp_adam_startup_before.ir   the unclipped program (Paddle's print)
  mlp_adam_clip_paddle.ir                          Paddle's clipped main program
  mlp_adam_clip_paddle_stages_mixed.ir             the same, its optimizer's state inputs marked
                                                   optimize (above the forward) and a forward op
                                                   after the optimizers
  numerics.json   the global norm, and every persistable after the step:
                  `state_after_full_batch_step` (Paddle's clip) and `state_after_unclipped_step`
                  (no clip, to show the clip acts); `compare_params` and `compare_state` name what
                  tests/interop/zoo.py compares, as in the zoo's numerics

Run once with the interop venv, from the repository root:
  FLAGS_new_executor_sequential_run=1 python tests/data/paddle_global_norm_clip.py
"""
import json, os, re
import numpy as np
import paddle

paddle.enable_static()
paddle.set_device("cpu")
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "paddle_clip")
ZOO = os.path.join(HERE, "..", "..", "..", "shared", "fixtures", "paddle-zoo")
FEED = json.load(open(os.path.join(ZOO, "mlp_clip_adam.feed.json")))
CLIP = 0.1
Role = paddle.base.core.op_proto_and_checker_maker.OpRole


def mark(block, role, inputs_forward=True):
    """Gives the ops without a role `role`; inputs and parameters are forward ops wherever they
    are made (as Paddle's `auto_complete_op_role` does for the Engine's programs) unless
    `inputs_forward` is false."""
    for op in block.ops:
        if op.op_role == -1:
            forward = inputs_forward and op.name() in ("pd_op.data", "builtin.parameter")
            op.op_role = int(Role.Forward) if forward else int(role)


def build(clip, inputs_forward=True, forward_after=False):
    paddle.base.framework._name_struct = paddle.base.framework.NameStruct()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.utils.unique_name.guard(), paddle.static.program_guard(main, startup):
        paddle.seed(2024)
        x = paddle.static.data("x", [-1, 6], "float32")
        y = paddle.static.data("y", [-1, 3], "float32")
        l1, l2 = paddle.nn.Linear(6, 16), paddle.nn.Linear(16, 3)
        loss = paddle.nn.functional.mse_loss(l2(paddle.nn.functional.relu(l1(x))), y)
        mark(main.global_block(), Role.Forward, inputs_forward)
        grad_clip = paddle.nn.ClipGradByGlobalNorm(CLIP) if clip else None
        opt = paddle.optimizer.Adam(0.01, grad_clip=grad_clip)
        params_grads = paddle.autograd.ir_backward.append_backward(loss)
        mark(main.global_block(), Role.Backward, inputs_forward)
        opt.apply_gradients(params_grads)
        mark(main.global_block(), Role.Optimize, inputs_forward)
        if forward_after:
            paddle.nn.functional.relu(loss)
            mark(main.global_block(), Role.Forward, inputs_forward)
    return main, startup, loss, params_grads


def text(prog):
    s = str(prog)
    return s if s.endswith("\n") else s + "\n"


def step(main, startup, loss, params_grads):
    exe = paddle.static.Executor(paddle.CPUPlace())
    scope = paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        exe.run(startup)
        for name, t in FEED["state_init"].items():
            v = scope.find_var(name)
            assert v is not None, name
            arr = np.asarray(t["values"], dtype=np.float32).reshape(t["shape"])
            v.get_tensor().set(arr, paddle.CPUPlace())
        feed = {k: np.asarray(v, dtype=np.float32) for k, v in FEED["inputs"].items()}
        grads = [g for _, g in params_grads]
        out = exe.run(main, feed=feed, fetch_list=[loss] + grads)
        norm = float(np.sqrt(sum(float(np.sum(np.asarray(g, np.float64) ** 2)) for g in out[1:])))
        state = {}
        for name in FEED["state_init"]:
            a = np.asarray(scope.find_var(name).get_tensor())
            state[name] = {"shape": list(a.shape), "dtype": "float32",
                           "values": [float(x) for x in a.astype(np.float64).ravel()]}
    return float(out[0]), norm, state


os.makedirs(OUT, exist_ok=True)
plain = build(False)
open(os.path.join(OUT, "mlp_adam_before.ir"), "w").write(text(plain[0]))
open(os.path.join(OUT, "mlp_adam_startup_before.ir"), "w").write(text(plain[1]))
clipped = build(True)
open(os.path.join(OUT, "mlp_adam_clip_paddle.ir"), "w").write(text(clipped[0]))
# The optimizer's state inputs (`pd_op.data` at the top of the program) marked optimize, and a
# forward op after the optimizers: the stages do not follow each other.
mixed = build(True, inputs_forward=False, forward_after=True)[0]
open(os.path.join(OUT, "mlp_adam_clip_paddle_stages_mixed.ir"), "w").write(text(mixed))
loss_u, norm_u, state_u = step(*plain)
loss_c, norm_c, state_c = step(*clipped)
assert abs(norm_u - norm_c) < 1e-6 and norm_c > CLIP, (norm_u, norm_c)
json.dump({
    "note": "Paddle 3.3.1, FLAGS_new_executor_sequential_run=1; one full-batch step from the zoo "
            "mlp_clip_adam feed (inputs, state_init); made by tests/data/paddle_global_norm_clip.py",
    "paddle": paddle.__version__,
    "feed": "../shared/fixtures/paddle-zoo/mlp_clip_adam.feed.json",
    "clip_norm": CLIP,
    "global_norm": norm_c,
    "loss_full_batch": loss_c,
    "state_after_full_batch_step": state_c,
    "state_after_unclipped_step": state_u,
    "compare_params": [n for n in state_c if re.fullmatch(r"linear_\d\.[wb]_0", n)],
    "compare_state": [n for n in state_c if n != "learning_rate_0"],
}, open(os.path.join(OUT, "numerics.json"), "w"), indent=1)
print("global norm", norm_c, "loss", loss_c)
