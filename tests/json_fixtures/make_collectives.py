"""Writes collectives.ir (Paddle's print) and collectives.json (serialize_pir_program) for a
program with every collective irw's dialect table has in its modern form: pd_op.all_reduce(_),
reduce(_), broadcast(_), all_gather, reduce_scatter, built by Paddle 3.3.1 itself (static mode,
_C_ops; nothing runs, so no second process is needed). tests/json_write.rs and
tests/json_read.rs check that irw reads and writes both exactly as Paddle does.

usage: python make_collectives.py      (in a venv with paddlepaddle==3.3.1)
"""
import paddle
from paddle import _C_ops

paddle.enable_static()
main = paddle.static.Program()
with paddle.static.program_guard(main, paddle.static.Program()):
    x = paddle.static.data("x", [4, 3], "float32")
    a = _C_ops.all_reduce(x, 0, 4)  # ring_id 0, reduce_type 4 (AVG)
    b = _C_ops.all_gather(a, 0, 2)  # ring_id 0, nranks 2
    c = _C_ops.reduce_scatter(b, 0, 2)  # ring_id 0, nranks 2
    d = _C_ops.broadcast(c, 0, 1)  # ring_id 0, root 1
    e = _C_ops.reduce(d, 0, 0, 0)  # ring_id 0, root_id 0, reduce_type 0 (SUM)
    f = _C_ops.all_reduce_(e, 0, 1)  # reduce_type 1 (MAX)
    g = _C_ops.broadcast_(f, 0, 0)
    h = _C_ops.reduce_(g, 0, 1, 0)
    paddle.mean(h)
with open("collectives.ir", "w") as fh:
    fh.write(str(main))
paddle.base.core.serialize_pir_program(main, "collectives.json", True, False, True)
