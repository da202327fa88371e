"""Writes shape_families.ir (Paddle's print) and shape_families.json (serialize_pir_program) for
a program of the ops whose result types depend on constant operands or on vectors: arange
(integral and float steps, a bound from a static dimension), split (sections with -1, a
negative axis, a dynamic dimension beside the split one), split_with_num,
check_finite_and_unscale_ and update_loss_scaling_ on a vector of gradients. irw's shape
families must derive every result type Paddle printed (tests/all/dialect_json.rs).
fused_linear_param_grad_add has no CPU kernel in Paddle 3.3.1, so CPU Paddle cannot build it;
its family follows FusedLinearParamGradAddInferMeta and is tested on its own.

usage: python make_shape_families.py shape_families      (paddlepaddle==3.3.1)
"""
import sys

import paddle
from paddle import _C_ops

paddle.enable_static()
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    x = paddle.static.data("x", [-1, 6, 4], "float32")
    y = paddle.static.data("y", [3, 8], "float32")
    paddle.arange(0, 10, 2, dtype="int64")
    paddle.arange(5, dtype="float32")
    paddle.arange(0.0, 1.0, 0.3, dtype="float32")
    paddle.arange(0, x.shape[1])
    paddle.split(x, [2, 4], axis=1)
    paddle.split(x, 3, axis=1)
    paddle.split(y, [3, -1], axis=-1)
    paddle.split(x, 2, axis=-1)
    g1 = paddle.static.data("g1", [8, 4], "float32")
    g2 = paddle.static.data("g2", [4], "float32")
    scale = paddle.static.data("scale", [1], "float32")
    good = paddle.static.data("good", [1], "int32")
    bad = paddle.static.data("bad", [1], "int32")
    _, found = _C_ops.check_finite_and_unscale_([g1, g2], scale)
    _C_ops.update_loss_scaling_([g1, g2], found, scale, good, bad, 1000, 2, 2.0, 0.5, False)
open(sys.argv[1] + ".ir", "w").write(str(main))
paddle.base.core.serialize_pir_program(main, sys.argv[1] + ".json", True, False, True)
