"""Writes lr_scheduler.ir (Paddle's print) and lr_scheduler.json (serialize_pir_program) for an
SGD program whose learning rate comes from a scheduler: Paddle holds it as a builtin.parameter
without is_distributed/is_parameter/need_clip/trainable, and its writer fills them in.

usage: python make_lr_scheduler.py lr_scheduler      (paddlepaddle==3.3.1)
       python make_lr_scheduler.py --engine PATH     (the program of the check golden
                                                      check/lr_scheduler_adam.test)
"""
import paddle, json, sys
paddle.enable_static()


def engine_program(path):
    """The same kind of program as the Engine trains it, for `irw check`: Adam on a
    StepDecay learning rate, op roles set per stage (forward 0, backward 1, optimize 2, the
    optimizer's state inputs 2), written as PATH_main.ir and PATH_startup.ir."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [8, 6], "float32")
        lin = paddle.nn.Linear(6, 3)
        loss = paddle.mean(lin(x) ** 2)
        opt = paddle.optimizer.Adam(paddle.optimizer.lr.StepDecay(0.1, step_size=2))
        opt.minimize(loss)
    ops = main.global_block().ops
    loss_at = max(i for i, op in enumerate(ops) if op.name() == "pd_op.mean")
    optimize_at = min(
        i for i, op in enumerate(ops) if i > loss_at and op.name() == "builtin.parameter"
    )
    for i, op in enumerate(ops):
        state = op.name() == "pd_op.data" and op.attrs().get("name") != "x" and i < loss_at
        op.op_role = 2 if state or i >= optimize_at else (0 if i <= loss_at else 1)
    open(path + "_main.ir", "w").write(str(main))
    open(path + "_startup.ir", "w").write(str(startup))


if sys.argv[1] == "--engine":
    engine_program(sys.argv[2])
    sys.exit(0)
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    x = paddle.static.data("x", [4, 6], "float32")
    lin = paddle.nn.Linear(6, 3)
    loss = paddle.mean(lin(x))
    sched = paddle.optimizer.lr.StepDecay(0.1, step_size=2)
    opt = paddle.optimizer.SGD(sched)
    opt.minimize(loss)
open(sys.argv[1] + ".ir", "w").write(str(main))
paddle.base.core.serialize_pir_program(main, sys.argv[1] + ".json", True, False, True)

