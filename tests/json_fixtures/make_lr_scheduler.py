"""Writes lr_scheduler.ir (Paddle's print) and lr_scheduler.json (serialize_pir_program) for an
SGD program whose learning rate comes from a scheduler: Paddle holds it as a builtin.parameter
without is_distributed/is_parameter/need_clip/trainable, and its writer fills them in.

usage: python make_lr_scheduler.py lr_scheduler      (paddlepaddle==3.3.1)
"""
import paddle, json, sys
paddle.enable_static()
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
