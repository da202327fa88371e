# Records Paddle 3.3.1's outputs for the kernels the hunters' vision and sequence models needed
# (comparisons, activations and their grads, cumsum, log_softmax, index_select, label_smooth,
# and the rmsprop_, adagrad_, adamax_ and lamb_ optimizers), in the layout of
# paddle_kernels.json, for src/exec/kernels/tests/kernels_paddle_models.rs. Run once with the
# interop venv (`python tests/exec_fixtures/paddle_model_kernels.py`); the numbers are
# committed, Paddle is not a test dependency. Inputs hold the points where a kernel changes
# branch (0, 6, ±3, clip bounds, ties of maximum/minimum) so their conventions are recorded.
import json, os, numpy as np, paddle
import paddle.nn.functional as F
from paddle import _C_ops
paddle.set_device('cpu')
rs = np.random.RandomState(11)
def T(a, grad=True):
    t = paddle.to_tensor(a); t.stop_gradient = not grad; return t
def enc(t):
    a = t.numpy() if hasattr(t, 'numpy') else np.asarray(t)
    return {"shape": list(a.shape), "dtype": str(a.dtype), "values": a.astype(np.float64).ravel().tolist() if a.dtype != np.bool_ else a.ravel().astype(int).tolist()}
cases = []
def case(name, inputs, attrs, outputs):
    cases.append({"name": name, "inputs": {k: enc(v) for k, v in inputs.items()}, "attrs": attrs, "outputs": {k: enc(v) for k, v in outputs.items()}})
f = lambda *s: rs.randn(*s).astype('float32')

def unary(name, fn, x, attrs={}):
    g = f(*x.shape)
    xt = T(x); o = fn(xt)
    (o * T(g, False)).sum().backward()
    case(name, {"x": x, "out_grad": g}, attrs, {"out": o, "x_grad": xt.grad})

# comparisons, with equal elements and broadcasting
x = np.array([[1., 2., 3.], [3., 2., 1.]], 'float32'); y = np.array([2., 2., 1.], 'float32')
for n, fn in [("not_equal", paddle.not_equal), ("greater_equal", paddle.greater_equal), ("less_equal", paddle.less_equal)]:
    case(n, {"x": x, "y": y}, {}, {"out": fn(T(x, False), T(y, False))})
# log, exp, sqrt grads
xp = np.abs(f(2, 5)) + 0.2
unary("log", paddle.log, xp)
unary("exp", paddle.exp, f(2, 5))
unary("sqrt", paddle.sqrt, xp)
# maximum/minimum grads: ties and a broadcast y
x = np.array([[1., 2., 3.], [0.5, -1., 4.]], 'float32'); y = np.array([1., 0., 3.5], 'float32')
for n, fn in [("maximum", paddle.maximum), ("minimum", paddle.minimum)]:
    g = f(2, 3); xt, yt = T(x), T(y); o = fn(xt, yt)
    (o * T(g, False)).sum().backward()
    case(n, {"x": x, "y": y, "out_grad": g}, {}, {"out": o, "x_grad": xt.grad, "y_grad": yt.grad})
# activations: branch points included
b = np.array([-4., -3., -1., 0., 0.5, 3., 5., 6., 7., -0.25], 'float32')
x = np.concatenate([b, 3 * f(14)]).reshape(4, 6)
unary("leaky_relu", lambda t: F.leaky_relu(t, 0.1), x, {"negative_slope": 0.1})
unary("relu6", F.relu6, x)
unary("hardswish", F.hardswish, x)
unary("hardsigmoid", lambda t: F.hardsigmoid(t, 0.2, 0.5), x, {"slope": 0.2, "offset": 0.5})
unary("elu", lambda t: F.elu(t, 0.7), x, {"alpha": 0.7})
unary("selu", F.selu, x, {"scale": 1.0507009873554804934193349852946, "alpha": 1.6732632423543772848170429916717})
unary("softplus", lambda t: F.softplus(t, 2.0, 5.0), x, {"beta": 2.0, "threshold": 5.0})
unary("swish", F.swish, x)
unary("mish", F.mish, x, {"lambda": 20.0})
unary("abs", paddle.abs, x)
unary("clip", lambda t: paddle.clip(t, -1.0, 3.0), x, {"min": -1.0, "max": 3.0})
# cumsum and its grad: axis, reverse, exclusive, flatten
x = f(2, 3, 4)
for n, kw, attrs in [("cumsum", dict(axis=1), {"axis": 1, "flatten": False, "exclusive": False, "reverse": False}),
                     ("cumsum_rev_excl", dict(axis=-1, reverse=True, exclusive=True), {"axis": -1, "flatten": False, "exclusive": True, "reverse": True}),
                     ("cumsum_flat", dict(axis=None), {"axis": -1, "flatten": True, "exclusive": False, "reverse": False})]:
    g = f(*(x.shape if kw.get("axis", 0) is not None else (24,)))
    xt = T(x)
    o = _C_ops.cumsum(xt, attrs["axis"], attrs["flatten"], attrs["exclusive"], attrs["reverse"])
    (o * T(g.reshape(o.shape), False)).sum().backward()
    case(n, {"x": x, "out_grad": g.reshape(o.shape)}, attrs, {"out": o, "x_grad": xt.grad})
# log_softmax
x = f(3, 5)
unary("log_softmax", lambda t: F.log_softmax(t, axis=-1), x, {"axis": -1})
x = f(3, 4, 2)
unary("log_softmax_axis1", lambda t: F.log_softmax(t, axis=1), x, {"axis": 1})
# index_select with repeated indices
x, idx = f(3, 4, 5), np.array([4, 0, 4, 2], 'int64')
g = f(3, 4, 4); xt = T(x); o = paddle.index_select(xt, T(idx, False), axis=2)
(o * T(g, False)).sum().backward()
case("index_select", {"x": x, "index": idx, "out_grad": g}, {"axis": 2}, {"out": o, "x_grad": xt.grad})
# label_smooth, with and without a prior
lab = np.eye(4, dtype='float32')[[1, 3, 0]]
case("label_smooth", {"label": lab}, {"epsilon": 0.1}, {"out": F.label_smooth(T(lab, False), epsilon=0.1)})
prior = np.array([[0.1, 0.2, 0.3, 0.4]], 'float32')
case("label_smooth_prior", {"label": lab, "prior_dist": prior}, {"epsilon": 0.2},
     {"out": F.label_smooth(T(lab, False), prior_dist=T(prior, False), epsilon=0.2)})

# optimizers: one step through Paddle's in-place ops, inputs copied first
def opt_inputs(n, **extra):
    d = dict(param=f(n), grad=f(n), learning_rate=np.array([0.01], 'float32'))
    d.update(extra)
    return d
n = 7
for centered in (False, True):
    i = opt_inputs(n, mean_square=np.abs(f(n)), moment=f(n), mean_grad=0.1 * f(n))
    t = {k: T(v.copy(), False) for k, v in i.items()}
    r = _C_ops.rmsprop_(t["param"], t["mean_square"], t["grad"], t["moment"], t["learning_rate"],
                        t["mean_grad"] if centered else None, None, 1e-6, 0.95, 0.5, centered, False)
    outs = dict(param_out=r[0], moment_out=r[1], mean_square_out=r[2])
    if centered:
        outs["mean_grad_out"] = r[3]
    else:
        i.pop("mean_grad")
    case("rmsprop_centered" if centered else "rmsprop", i,
         {"epsilon": 1e-6, "decay": 0.95, "momentum": 0.5, "centered": centered}, outs)
i = opt_inputs(n, moment=np.abs(f(n)))
t = {k: T(v.copy(), False) for k, v in i.items()}
r = _C_ops.adagrad_(t["param"], t["grad"], t["moment"], t["learning_rate"], None, 1e-6, False)
case("adagrad", i, {"epsilon": 1e-6}, dict(param_out=r[0], moment_out=r[1]))
i = opt_inputs(n, moment=0.1 * f(n), inf_norm=np.abs(f(n)), beta1_pow=np.array([0.9 ** 3], 'float32'))
t = {k: T(v.copy(), False) for k, v in i.items()}
r = _C_ops.adamax_(t["param"], t["grad"], t["learning_rate"], t["moment"], t["inf_norm"], t["beta1_pow"], None,
                   0.9, 0.999, 1e-8, False)
case("adamax", i, {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8}, dict(param_out=r[0], moment_out=r[1], inf_norm_out=r[2]))
for wd, name in [(0.01, "lamb"), (0.0, "lamb_no_decay")]:
    i = opt_inputs(n, moment1=0.1 * f(n), moment2=0.1 * np.abs(f(n)), beta1_pow=np.array([0.9 ** 2], 'float32'),
                   beta2_pow=np.array([0.999 ** 2], 'float32'))
    t = {k: T(v.copy(), False) for k, v in i.items()}
    r = _C_ops.lamb_(t["param"], t["grad"], t["learning_rate"], t["moment1"], t["moment2"], t["beta1_pow"], t["beta2_pow"],
                     None, None, wd, 0.9, 0.999, 1e-6, False, False)
    case(name, i, {"weight_decay": wd, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-6},
         dict(param_out=r[0], moment1_out=r[1], moment2_out=r[2], beta1_pow_out=r[3], beta2_pow_out=r[4]))

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'paddle_model_kernels.json')
json.dump({"paddle": paddle.__version__, "cases": cases}, open(out, 'w'), indent=None)
print(len(cases), "cases", paddle.__version__)
