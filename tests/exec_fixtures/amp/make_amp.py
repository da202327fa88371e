# Records, with Paddle 3.3.1 (run once with the interop venv's python; the outputs are committed,
# Paddle is not a test dependency):
# - mlp_loss_scaling.ir: an MLP trained with SGD under dynamic loss scaling, main and startup as
#   Paddle prints them. The ops are what `paddle.static.amp`'s decorator emits
#   (`check_finite_and_unscale` and `update_loss_scaling` of `paddle.static.amp.amp_nn`, on the
#   gradients `append_backward` returns, the optimizers reading those same gradients), built by
#   hand because the decorator itself fails on PIR on CPU; op roles as in
#   ../../../../shared/fixtures/paddle-zoo/README.md.
# - on standard output, Paddle's results of both kernels on small inputs (finite, infinite, NaN;
#   the counters reaching their thresholds): the unit tests of src/exec/kernels/amp.rs hold them.
# - mlp_loss_scaling.stepN.json: four steps of Paddle on that program (tests/all/exec_amp.rs), and
#   mlp_loss_scaling.numerics.json, step 0 for tests/interop/zoo.py (run by zoo.sh).
import json, sys
import numpy as np
import paddle
from paddle import _C_ops
from paddle.pir.core import create_persistable_value
from paddle.static.amp.amp_nn import check_finite_and_unscale, update_loss_scaling

OUT = sys.argv[1] if len(sys.argv) > 1 else "."


def program():
    paddle.enable_static()
    paddle.seed(2024)
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [-1, 6], "float32")
        y = paddle.static.data("y", [-1, 3], "float32")
        l1, l2 = paddle.nn.Linear(6, 8), paddle.nn.Linear(8, 3)
        loss = paddle.mean((l2(paddle.nn.functional.relu(l1(x))) - y) ** 2)
        C = paddle.nn.initializer.Constant
        ls = create_persistable_value("float32", [1], "loss_scaling", initializer=C(1024.0))
        good = create_persistable_value("int32", [1], "num_good_steps", initializer=C(0))
        bad = create_persistable_value("int32", [1], "num_bad_steps", initializer=C(0))
        scaled = paddle.multiply(loss, ls)

        def mark(role):
            for op in main.global_block().ops:
                if op.op_role == -1:
                    op.op_role = role

        # The learning rate's persistable `pd_op.data` is made here, as in the paddle-zoo
        # programs, so it lands at the top of the block in the forward stage.
        opt = paddle.optimizer.SGD(0.1)
        opt._create_global_learning_rate()
        mark(0)
        pg = paddle.static.append_backward(scaled)
        mark(1)
        grads = [g for _, g in pg]
        _, found = check_finite_and_unscale(grads, ls)
        update_loss_scaling(grads, found, ls, good, bad, 2, 1, 2.0, 0.5)
        opt.apply_gradients(pg)
        mark(2)
    with open(f"{OUT}/mlp_loss_scaling.ir", "w") as f:
        f.write(str(main).rstrip("\n") + "\nstartup " + str(startup).lstrip())
    # Three steps on one batch of 8 rows: the second finite step doubles the scale
    # (incr_every_n_steps 2). The fourth batch's inputs are 1e36: the scaled gradient overflows,
    # so that step zeroes the gradients, halves the scale and leaves the parameters.
    rs = np.random.RandomState(2024)
    feeds = [{"x": rs.randn(8, 6).astype("float32"), "y": rs.randn(8, 3).astype("float32")} for _ in range(3)]
    feeds.append({"x": np.full((8, 6), 1e36, "float32"), "y": np.zeros((8, 3), "float32")})
    scope = paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        names = sorted(n for n in scope.local_var_names() if np.array(scope.find_var(n).get_tensor()).size)
        snap = lambda: {n: enc(np.array(scope.find_var(n).get_tensor())) for n in names}
        states = [snap()]
        for feed in feeds:
            exe.run(main, feed=feed)
            states.append(snap())
    for i, feed in enumerate(feeds):
        with open(f"{OUT}/mlp_loss_scaling.step{i}.json", "w") as f:
            json.dump({"note": f"step {i} of Paddle 3.3.1 on mlp_loss_scaling.ir: `inputs`, the "
                       "state before (`state_init`) and after (`state_after`) the step",
                       "inputs": {n: enc(v) for n, v in feed.items()},
                       "state_init": states[i], "state_after": states[i + 1]}, f)
    # Step 0 in the layout of the paddle-zoo numerics, for tests/interop/zoo.py (the feed is
    # mlp_loss_scaling.step0.json).
    with open(f"{OUT}/mlp_loss_scaling.numerics.json", "w") as f:
        json.dump({"note": "Paddle 3.3.1's full-batch step 0 of mlp_loss_scaling.ir",
                   "state_after_full_batch_step": states[1],
                   "compare_params": ["linear_0.w_0", "linear_0.b_0", "linear_1.w_0", "linear_1.b_0"],
                   "compare_state": ["loss_scaling", "num_good_steps", "num_bad_steps"]}, f)
    paddle.disable_static()


def enc(t):
    a = t.numpy() if hasattr(t, "numpy") else np.asarray(t)
    vals = a.ravel().astype(int).tolist() if a.dtype == np.bool_ else a.astype(np.float64).ravel().tolist()
    return {"shape": list(a.shape), "dtype": str(a.dtype), "values": vals}


def kernels():
    paddle.set_device("cpu")
    cases = []
    T = paddle.to_tensor
    xs_ok = [np.array([1.5, -3.0, 0.0, 1e-3], "float32"), np.array([[2048.0, -7.25], [3.0, 1e30]], "float32")]
    xs_inf = [xs_ok[0], np.array([[1.0, np.inf], [-2.0, 4.0]], "float32"), np.array([5.0, -6.0], "float32")]
    xs_nan = [np.array([np.nan, 2.0], "float32"), xs_ok[0]]
    for name, xs, scale in [("finite", xs_ok, 3.0), ("inf_second", xs_inf, 1024.0), ("nan_first", xs_nan, 0.5)]:
        ts = [T(x) for x in xs]
        outs, found = _C_ops.check_finite_and_unscale_(ts, T(np.array([scale], "float32")))
        cases.append({"op": "check_finite_and_unscale_", "name": name,
                      "x": [enc(x) for x in xs], "scale": scale,
                      "out": [enc(o) for o in outs], "found_infinite": enc(found)})
    # update_loss_scaling_: incr every 2 good steps by 2, decr every 2 bad steps by 0.5, floor 1.
    for name, found, prev, good, bad, stop in [
        ("good_below", False, 1024.0, 0, 3, False), ("good_reaches", False, 1024.0, 1, 0, False),
        ("good_overflow", False, 3e38, 1, 0, False), ("bad_below", True, 1024.0, 5, 0, False),
        ("bad_reaches", True, 1024.0, 0, 1, False), ("bad_floor", True, 1.5, 0, 1, False),
        ("stopped", True, 1024.0, 0, 1, True)]:
        xs = [np.array([1.0, -2.0], "float32"), np.array([[3.0]], "float32")]
        ts = [T(x) for x in xs]
        p, g, b = T(np.array([prev], "float32")), T(np.array([good], "int32")), T(np.array([bad], "int32"))
        _C_ops.update_loss_scaling_(ts, T(np.array([found])), p, g, b, 2, 2, 2.0, 0.5, stop)
        cases.append({"op": "update_loss_scaling_", "name": name, "x": [enc(x) for x in xs],
                      "found_infinite": found, "prev_loss_scaling": prev, "in_good_steps": good,
                      "in_bad_steps": bad, "stop_update": stop,
                      "attrs": {"incr_every_n_steps": 2, "decr_every_n_nan_or_inf": 2,
                                "incr_ratio": 2.0, "decr_ratio": 0.5},
                      "out": [enc(t) for t in ts], "loss_scaling": enc(p),
                      "out_good_steps": enc(g), "out_bad_steps": enc(b)})
    json.dump({"paddle": paddle.__version__, "cases": cases}, sys.stdout, indent=1)


kernels()
program()
