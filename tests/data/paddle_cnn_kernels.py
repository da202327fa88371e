"""Records Paddle 3.3.1's results for small conv2d, pool2d, batch_norm and dropout cases
(forward and backward) as tests/data/paddle_cnn_kernels.json, read by irw's unit tests of
src/exec/kernels/{conv,pool,batch_norm,dropout}.rs. Inputs are closed-form sequences so the
tests rebuild them without storing them:

  x[i] = sin(0.37 i + 0.1), w[i] = 0.5 cos(0.23 i), dout[i] = cos(0.11 i + 0.3)  (flat index i)

Run once with the interop venv: python tests/data/paddle_cnn_kernels.py
"""
import json, math, os
import numpy as np
import paddle
import paddle.nn.functional as F

paddle.set_device("cpu")

def seq(shape, f):
    n = int(np.prod(shape))
    return np.array([f(i) for i in range(n)], dtype=np.float32).reshape(shape)

X = lambda i: math.sin(0.37 * i + 0.1)
W = lambda i: 0.5 * math.cos(0.23 * i)
D = lambda i: math.cos(0.11 * i + 0.3)

def t(a, grad=True):
    v = paddle.to_tensor(a)
    v.stop_gradient = not grad
    return v

def flat(v):
    return [float(x) for x in np.asarray(v.numpy() if hasattr(v, "numpy") else v, dtype=np.float64).ravel()]

cases = {}

def conv(name, xs, ws, **kw):
    x, w = t(seq(xs, X)), t(seq(ws, W))
    y = F.conv2d(x, w, **kw)
    d = seq(y.shape, D)
    (y * t(d, False)).sum().backward()
    cases[name] = dict(x=xs, w=ws, attrs={k: v for k, v in kw.items()}, out_shape=list(y.shape),
                       out=flat(y), x_grad=flat(x.grad), w_grad=flat(w.grad))

conv("conv_asym", [2, 4, 7, 8], [6, 4, 3, 3], stride=[2, 1], padding=[[0, 0], [0, 0], [1, 2], [0, 1]],
     dilation=[1, 2], groups=1, data_format="NCHW")
conv("conv_groups_nhwc_same", [2, 6, 6, 4], [6, 2, 3, 3], stride=2, padding="SAME", groups=2,
     data_format="NHWC")
conv("conv_depthwise", [1, 4, 6, 6], [8, 1, 3, 3], stride=1, padding=1, groups=4, data_format="NCHW")
conv("conv_valid", [1, 2, 5, 5], [3, 2, 2, 2], stride=2, padding="VALID", data_format="NCHW")

def pool(name, xs, kind, **kw):
    x = t(seq(xs, X))
    if kind == "max":
        y = F.max_pool2d(x, **kw)
    elif kind == "avg":
        y = F.avg_pool2d(x, **kw)
    elif kind == "amax":
        y = F.adaptive_max_pool2d(x, **kw)
    else:
        y = F.adaptive_avg_pool2d(x, **kw)
    d = seq(y.shape, D)
    (y * t(d, False)).sum().backward()
    cases[name] = dict(x=xs, kind=kind, attrs=kw, out_shape=list(y.shape), out=flat(y), x_grad=flat(x.grad))

pool("max_ceil_pad", [2, 3, 7, 6], "max", kernel_size=3, stride=2, padding=1, ceil_mode=True)
pool("avg_inclusive_pad", [1, 2, 5, 6], "avg", kernel_size=[3, 2], stride=[2, 2], padding=[1, 1], exclusive=False)
pool("avg_exclusive_pad_ceil", [1, 2, 5, 6], "avg", kernel_size=3, stride=2, padding=1, exclusive=True, ceil_mode=True)
pool("avg_nhwc", [2, 4, 5, 3], "avg", kernel_size=2, stride=2, data_format="NHWC")
pool("adaptive_avg", [1, 2, 7, 5], "aavg", output_size=[3, 2])
pool("adaptive_max", [1, 2, 7, 5], "amax", output_size=[3, 2])
pool("global_avg", [2, 3, 4, 5], "aavg", output_size=1)

# max pool with ties: every window of a constant input
x = t(np.zeros([1, 1, 4, 4], np.float32))
y = F.max_pool2d(x, kernel_size=2, stride=2)
(y * t(seq(y.shape, D), False)).sum().backward()
cases["max_ties"] = dict(x=[1, 1, 4, 4], out=flat(y), x_grad=flat(x.grad))

def bn(name, xs, fmt, training, use_global_stats=None, momentum=0.9, eps=1e-5):
    c = xs[1] if fmt == "NCHW" else xs[-1]
    x = t(seq(xs, X))
    scale = t(seq([c], lambda i: 1.0 + 0.1 * i))
    bias = t(seq([c], lambda i: 0.2 - 0.05 * i))
    mean = t(seq([c], lambda i: 0.01 * i), False)
    var = t(seq([c], lambda i: 1.0 + 0.2 * i), False)
    outs = paddle._C_ops.batch_norm(x, mean, var, scale, bias, not training, momentum, eps, fmt,
                                    bool(use_global_stats), False)
    y = outs[0]
    d = seq(y.shape, D)
    (y * t(d, False)).sum().backward()
    cases[name] = dict(x=xs, data_format=fmt, training=training, use_global_stats=bool(use_global_stats),
                       momentum=momentum, epsilon=eps, out=flat(y), mean_out=flat(outs[1]),
                       variance_out=flat(outs[2]), saved_mean=flat(outs[3]), saved_variance=flat(outs[4]),
                       x_grad=flat(x.grad), scale_grad=flat(scale.grad), bias_grad=flat(bias.grad))

bn("bn_train_nchw", [3, 4, 2, 3], "NCHW", True)
bn("bn_train_nhwc", [2, 3, 2, 5], "NHWC", True, momentum=0.8)
bn("bn_global_stats", [3, 4, 2, 3], "NCHW", True, use_global_stats=True)
bn("bn_eval", [2, 3, 2, 2], "NCHW", False)

for name, p, is_test, mode in [("dropout_p0_train", 0.0, False, "upscale_in_train"),
                               ("dropout_test_downgrade", 0.3, True, "downscale_in_infer"),
                               ("dropout_test_upscale", 0.3, True, "upscale_in_train")]:
    x = t(seq([2, 5], X))
    y = F.dropout(x, p=p, training=not is_test, mode=mode)
    (y * t(seq([2, 5], D), False)).sum().backward()
    cases[name] = dict(x=[2, 5], p=p, is_test=is_test, mode=mode, out=flat(y), x_grad=flat(x.grad))

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "paddle_cnn_kernels.json")
with open(out, "w") as f:
    json.dump({"paddle": paddle.__version__, "cases": cases}, f, indent=0, sort_keys=True)
print("wrote", out, len(cases), "cases")
