# Records Paddle 3.3.1's outputs of small kernel cases for irw's tests (run once; the numbers are
# committed, Paddle is not a test dependency).
import json, numpy as np, paddle
import paddle.nn.functional as F
from paddle import _C_ops
paddle.set_device('cpu')
rs = np.random.RandomState(7)
def T(a, grad=True):
    t = paddle.to_tensor(a); t.stop_gradient = not grad; return t
def enc(t):
    a = t.numpy() if hasattr(t, 'numpy') else np.asarray(t)
    return {"shape": list(a.shape), "dtype": str(a.dtype), "values": a.astype(np.float64).ravel().tolist() if a.dtype != np.bool_ else a.ravel().astype(int).tolist()}
cases = []
def case(name, inputs, attrs, outputs):
    cases.append({"name": name, "inputs": {k: enc(v) for k, v in inputs.items()}, "attrs": attrs, "outputs": {k: enc(v) for k, v in outputs.items()}})
f = lambda *s: rs.randn(*s).astype('float32')

# layer_norm: mean and variance are results the dynamic API does not return, so static mode
def layer_norm_static(x, w, b, g, axis):
    paddle.enable_static()
    main, start = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, start):
        xs = paddle.static.data('x', list(x.shape), 'float32'); xs.stop_gradient = False
        gs = paddle.static.data('g', list(g.shape), 'float32')
        feed = {'x': x, 'g': g}
        ws = bs = None
        if w is not None:
            ws = paddle.static.data('w', list(w.shape), 'float32'); ws.stop_gradient = False
            bs = paddle.static.data('b', list(b.shape), 'float32'); bs.stop_gradient = False
            feed.update(w=w, b=b)
        out = _C_ops.layer_norm(xs, ws, bs, 1e-5, axis)
        ln_op = out.get_defining_op()
        mean, var = ln_op.result(1), ln_op.result(2)
        loss = (out * gs).sum()
        wrt = [xs] + ([ws, bs] if w is not None else [])
        grads = paddle.static.gradients([loss], wrt)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(start)
    res = exe.run(main, feed=feed, fetch_list=[out, mean, var] + grads)
    paddle.disable_static()
    return res
x, w, b, g = f(2, 3, 5), f(5), f(5), f(2, 3, 5)
r = layer_norm_static(x, w, b, g, 2)
case("layer_norm", {"x": x, "scale": w, "bias": b, "out_grad": g}, {"epsilon": 1e-5, "begin_norm_axis": 2},
     dict(zip(["out", "mean", "variance", "x_grad", "scale_grad", "bias_grad"], r)))
x, g = f(3, 2, 4), f(3, 2, 4)
r = layer_norm_static(x, None, None, g, 1)
case("layer_norm_noparams", {"x": x, "out_grad": g}, {"epsilon": 1e-5, "begin_norm_axis": 1},
     dict(zip(["out", "mean", "variance", "x_grad"], r)))
# squared_l2_norm, clip_by_norm
x = f(4, 3)
case("squared_l2_norm", {"x": x}, {}, {"out": _C_ops.squared_l2_norm(T(x, False))})
case("clip_by_norm", {"x": x}, {"max_norm": 1.0}, {"out": _C_ops.clip_by_norm(T(x, False), 1.0)})
# gather + grad
x, idx = f(4, 3), np.array([2, 0, 2], dtype='int64')
xt = T(x); o = paddle.gather(xt, T(idx, False), axis=0); g = f(3, 3)
(o * T(g, False)).sum().backward()
case("gather", {"x": x, "index": idx, "out_grad": g}, {"axis": 0}, {"out": o, "x_grad": xt.grad})
# embedding + grad, padding_idx 1
wv, ids = f(5, 3), np.array([[3, 1], [1, 4]], dtype='int64')
wt = T(wv); o = F.embedding(T(ids, False), wt, padding_idx=1); g = f(2, 2, 3)
(o * T(g, False)).sum().backward()
case("embedding", {"x": ids, "weight": wv, "out_grad": g}, {"padding_idx": 1}, {"out": o, "weight_grad": wt.grad})
# where + grad
c, x, y = rs.rand(2, 3) > 0.5, f(2, 3), f(2, 3)
xt, yt = T(x), T(y); o = paddle.where(T(c, False), xt, yt); g = f(2, 3)
(o * T(g, False)).sum().backward()
case("where", {"condition": c, "x": x, "y": y, "out_grad": g}, {}, {"out": o, "x_grad": xt.grad, "y_grad": yt.grad})
# expand, tile + grads
x = f(3, 1)
xt = T(x); o = paddle.expand(xt, [2, 3, 4]); g = f(2, 3, 4)
(o * T(g, False)).sum().backward()
case("expand", {"x": x, "out_grad": g}, {"shape": [2, 3, 4]}, {"out": o, "x_grad": xt.grad})
x = f(2, 3)
xt = T(x); o = paddle.tile(xt, [2, 1, 2]); g = f(2, 2, 6)
(o * T(g, False)).sum().backward()
case("tile", {"x": x, "out_grad": g}, {"repeat_times": [2, 1, 2]}, {"out": o, "x_grad": xt.grad})
# triu/tril
x = f(2, 3, 4)
case("triu", {"x": x}, {"diagonal": 1}, {"out": paddle.triu(T(x, False), 1)})
case("tril", {"x": x}, {"diagonal": -1}, {"out": paddle.tril(T(x, False), -1)})
# arange
case("arange", {}, {"start": 0.5, "end": 3.0, "step": 0.75}, {"out": paddle.arange(0.5, 3.0, 0.75, dtype='float32')})
# pow, rsqrt, silu, swiglu with grads
x = np.abs(f(7)) + 0.1
xt = T(x); o = paddle.pow(xt, 2.5); g = f(7)
(o * T(g, False)).sum().backward()
case("pow", {"x": x, "out_grad": g}, {"y": 2.5}, {"out": o, "x_grad": xt.grad})
xt = T(x); o = paddle.rsqrt(xt)
(o * T(g, False)).sum().backward()
case("rsqrt", {"x": x, "out_grad": g}, {}, {"out": o, "x_grad": xt.grad})
x = f(7)
xt = T(x); o = F.silu(xt)
(o * T(g, False)).sum().backward()
case("silu", {"x": x, "out_grad": g}, {}, {"out": o, "x_grad": xt.grad})
try:
    from paddle.incubate.nn.functional import swiglu
    x, y, g = f(2, 4), f(2, 4), f(2, 4)
    xt, yt = T(x), T(y); o = swiglu(xt, yt)
    (o * T(g, False)).sum().backward()
    case("swiglu", {"x": x, "y": y, "out_grad": g}, {}, {"out": o, "x_grad": xt.grad, "y_grad": yt.grad})
except Exception as e:
    print("swiglu:", e)
# slice grad
x = f(3, 4)
xt = T(x); o = paddle.slice(xt, axes=[0, 1], starts=[1, -3], ends=[3, 4]); g = f(2, 3)
(o * T(g, False)).sum().backward()
case("slice", {"x": x, "out_grad": g}, {"axes": [0, 1], "starts": [1, -3], "ends": [3, 4]}, {"out": o, "x_grad": xt.grad})
# stack, concat/split grads
a, b2 = f(2, 3), f(2, 3)
at, bt = T(a), T(b2); o = paddle.stack([at, bt], axis=1); g = f(2, 2, 3)
(o * T(g, False)).sum().backward()
case("stack", {"x0": a, "x1": b2, "out_grad": g}, {"axis": 1}, {"out": o, "x0_grad": at.grad, "x1_grad": bt.grad})
json.dump({"paddle": paddle.__version__, "cases": cases}, open('/work/wt/seq/tests/exec_fixtures/paddle_kernels.json', 'w'), indent=None)
print(len(cases), "cases", paddle.__version__)
