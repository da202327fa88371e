# Records Paddle 3.3.1's outputs for the kernels real vision and sequence models need
# (comparisons, activations and their grads, cumsum, log_softmax, index_select, label_smooth,
# and the rmsprop_, adagrad_, adamax_ and lamb_ optimizers; then prelu, group_norm,
# instance_norm, more activations, max/min/logsumexp/mean_all, flip, roll, one_hot, huber_loss
# and sigmoid_cross_entropy_with_logits; then pad3d, nearest_interp and bilinear_interp; then
# conv2d_transpose, max_pool2d_with_index, pixel_shuffle/unshuffle, unfold, maxout and pool3d), in the
# layout of paddle_kernels.json, for src/exec/kernels/tests/kernels_paddle_models.rs. Run once with the
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

# ---- second set: normalizations, more activations, reductions, reorders, losses ----
# prelu in every mode and layout; the input holds exact zeros (the slope side at 0)
def prelu_case(name, x, alpha, mode, fmt):
    g = f(*x.shape); xt, at = T(x), T(alpha)
    o = _C_ops.prelu(xt, at, fmt, mode)
    (o * T(g, False)).sum().backward()
    case(name, {"x": x, "alpha": alpha, "out_grad": g}, {"mode": mode, "data_format": fmt},
         {"out": o, "x_grad": xt.grad, "alpha_grad": at.grad})
x = f(2, 3, 2, 2); x[0, 0, 0, :] = 0.0
prelu_case("prelu_all", x, np.array([0.25], 'float32'), "all", "NCHW")
prelu_case("prelu_channel", x, f(3), "channel", "NCHW")
prelu_case("prelu_channel_nhwc", x.transpose(0, 2, 3, 1).copy(), f(3), "channel", "NHWC")
prelu_case("prelu_element", x, f(1, 3, 2, 2), "element", "NCHW")
# group_norm (NCHW and NHWC) and instance_norm, with their saved statistics and every gradient
def norm_case(name, fn, x, c, attrs):
    g = f(*x.shape); xt, st, bt = T(x), T(1 + 0.1 * f(c)), T(0.1 * f(c))
    # In dynamic mode the saved statistics are intermediates Paddle does not return; the grads,
    # which the executor computes from its own saved statistics, check them.
    y = fn(xt, st, bt)
    (y * T(g, False)).sum().backward()
    case(name, {"x": x, "scale": st.numpy(), "bias": bt.numpy(), "y_grad": g}, attrs,
         {"y": y, "x_grad": xt.grad, "scale_grad": st.grad, "bias_grad": bt.grad})
x = f(2, 6, 3, 3)
norm_case("group_norm", lambda x, s, b: _C_ops.group_norm(x, s, b, 1e-5, 3, "NCHW"), x, 6,
          {"epsilon": 1e-5, "groups": 3, "data_format": "NCHW"})
norm_case("group_norm_nhwc", lambda x, s, b: _C_ops.group_norm(x, s, b, 1e-5, 2, "NHWC"),
          x.transpose(0, 2, 3, 1).copy(), 6, {"epsilon": 1e-5, "groups": 2, "data_format": "NHWC"})
norm_case("instance_norm", lambda x, s, b: _C_ops.instance_norm(x, s, b, 1e-5), x[:, :4].copy(), 4,
          {"epsilon": 1e-5})
# element-wise activations, inputs on their kinks (±0.5 shrink thresholds, hardtanh bounds)
b = np.array([-2., -0.5, -0.25, 0., 0.25, 0.5, 1., 2., -1., 0.75], 'float32')
x = np.concatenate([b, 2 * f(14)]).reshape(4, 6)
unary("hardtanh", lambda t: F.hardtanh(t, -0.5, 1.0), x, {"t_min": -0.5, "t_max": 1.0})
unary("softsign", F.softsign, x)
unary("logsigmoid", F.log_sigmoid, x)
unary("tanh_shrink", F.tanhshrink, x)
unary("softshrink", lambda t: F.softshrink(t, 0.5), x, {"threshold": 0.5})
unary("hardshrink", lambda t: F.hardshrink(t, 0.5), x, {"threshold": 0.5})
unary("thresholded_relu", lambda t: F.thresholded_relu(t, 0.5, 0.1), x, {"threshold": 0.5, "value": 0.1})
unary("celu", lambda t: F.celu(t, 0.8), x, {"alpha": 0.8})
unary("stanh", lambda t: paddle.stanh(t, 0.67, 1.7159), x, {"scale_a": 0.67, "scale_b": 1.7159})
# max/min over axes, with ties (each tied extremum gets the gradient)
x = np.array([[[1., 3., 3.], [2., 2., 0.]], [[5., -1., 5.], [0., 4., 4.]]], 'float32')
for n, fn in [("max", paddle.max), ("min", paddle.min)]:
    for sfx, ax, keep in [("", [2], False), ("_keep", [0, 2], True), ("_all", None, False)]:
        o_shape = fn(T(x, False), axis=ax, keepdim=keep).shape
        g = f(*o_shape) if o_shape else np.array(f(1)[0], 'float32')
        xt = T(x); o = fn(xt, axis=ax, keepdim=keep)
        (o * T(g, False)).sum().backward()
        case(n + sfx, {"x": x, "out_grad": g}, {"axis": ax or [], "keepdim": keep},
             {"out": o, "x_grad": xt.grad})
x = 3 * f(3, 4, 2)
for sfx, ax, keep in [("", [1], False), ("_keep", [0, 2], True), ("_all", None, False)]:
    xt = T(x); o = paddle.logsumexp(xt, axis=ax, keepdim=keep)
    g = f(*o.shape) if o.shape else np.array(f(1)[0], 'float32')
    (o * T(g, False)).sum().backward()
    case("logsumexp" + sfx, {"x": x, "out_grad": g}, {"axis": ax or [], "keepdim": keep, "reduce_all": ax is None},
         {"out": o, "x_grad": xt.grad})
xt = T(x); o = _C_ops.mean_all(xt); gs = np.array(0.7, 'float32')
(o * T(gs, False)).sum().backward()
case("mean_all", {"x": x, "out_grad": gs}, {}, {"out": o, "x_grad": xt.grad})
# flip and roll (grads: the moves undone)
x = f(2, 3, 4)
unary("flip", lambda t: paddle.flip(t, [0, 2]), x, {"axis": [0, 2]})
unary("roll", lambda t: paddle.roll(t, [1, -2], [1, 2]), x, {"shifts": [1, -2], "axis": [1, 2]})
unary("roll_flat", lambda t: paddle.roll(t, 5), x, {"shifts": [5], "axis": []})
# one_hot
idx = np.array([[0, 3], [2, 1], [3, 3]], 'int64')
case("one_hot", {"x": idx}, {"num_classes": 4}, {"out": F.one_hot(T(idx, False), 4)})
# huber_loss: residuals inside, on and beyond delta
inp = f(3, 4); lab = inp + np.array([0.0, 0.5, -0.5, 2.0] * 3, 'float32').reshape(3, 4); lab[0, 0] = inp[0, 0] + 1.0
g = f(3, 4); it, lt = T(inp), T(lab)
out = _C_ops.huber_loss(it, lt, 1.0)  # the residual is an intermediate dynamic mode hides
(out * T(g, False)).sum().backward()
case("huber_loss", {"input": inp, "label": lab, "out_grad": g}, {"delta": 1.0},
     {"out": out, "input_grad": it.grad, "label_grad": lt.grad})
# sigmoid_cross_entropy_with_logits: soft labels, an ignored label, normalize, pos_weight
x = 3 * f(3, 4); x[0, 0] = 0.0
lab = rs.rand(3, 4).astype('float32'); lab[1, 2] = -100.0
pw = 0.5 + rs.rand(3, 4).astype('float32')
for n, norm, w in [("sigmoid_ce", False, None), ("sigmoid_ce_norm", True, None), ("sigmoid_ce_pos_weight", False, pw)]:
    g = f(3, 4); xt = T(x)
    o = _C_ops.sigmoid_cross_entropy_with_logits(xt, T(lab, False), None if w is None else T(w, False), norm, -100)
    (o * T(g, False)).sum().backward()
    ins = {"x": x, "label": lab, "out_grad": g}
    if w is not None:
        ins["pos_weight"] = w
    case(n, ins, {"normalize": norm, "ignore_index": -100}, {"out": o, "x_grad": xt.grad})
# pad3d in every mode and both layouts; paddings are [left, right, top, bottom, front, back],
# unequal so that an axis mix-up shows
for n, mode, val, fmt, pads in [("pad3d_constant", "constant", 1.5, "NCDHW", [1, 2, 0, 1, 2, 0]),
                                ("pad3d_reflect", "reflect", 0.0, "NCDHW", [2, 1, 1, 2, 1, 1]),
                                ("pad3d_replicate", "replicate", 0.0, "NCDHW", [3, 0, 2, 1, 0, 2]),
                                ("pad3d_circular", "circular", 0.0, "NCDHW", [1, 3, 2, 0, 1, 2]),
                                ("pad3d_reflect_ndhwc", "reflect", 0.0, "NDHWC", [1, 2, 2, 1, 0, 1]),
                                ("pad3d_constant_ndhwc", "constant", -2.0, "NDHWC", [0, 1, 1, 0, 2, 1])]:
    x = f(2, 3, 2, 3, 4) if fmt == "NCDHW" else f(2, 2, 3, 4, 3)
    xt = T(x); o = F.pad(xt, pads, mode=mode, value=val, data_format=fmt)
    g = f(*o.shape); (o * T(g, False)).sum().backward()
    case(n, {"x": x, "out_grad": g}, {"paddings": pads, "mode": mode, "pad_value": val, "data_format": fmt},
         {"out": o, "x_grad": xt.grad})
# nearest_interp and bilinear_interp on NCHW, with the attributes Paddle's builders give:
# Upsample(scale_factor=2) (scale [2, 2], out_h/out_w -1, align_corners false, align_mode 0),
# F.interpolate(size=...) (out_h/out_w, scale []), align_corners, align_mode 1, a fractional
# scale and a downsampling size
for n, method, oh, ow, scale, ac, am in [("nearest_interp_scale2", "nearest", -1, -1, [2.0, 2.0], False, 0),
                                         ("bilinear_interp_scale2", "bilinear", -1, -1, [2.0, 2.0], False, 0),
                                         ("nearest_interp_size", "nearest", 7, 9, [], False, 0),
                                         ("bilinear_interp_size_align_corners", "bilinear", 7, 9, [], True, 0),
                                         ("bilinear_interp_size_align_mode1", "bilinear", 3, 7, [], False, 1),
                                         ("bilinear_interp_scale1_5", "bilinear", -1, -1, [1.5, 1.5], False, 0),
                                         ("nearest_interp_down", "nearest", 3, 2, [], False, 0),
                                         ("nearest_interp_align_corners", "nearest", 7, 9, [], True, 1)]:
    x = f(2, 3, 4, 5); xt = T(x)
    op = _C_ops.nearest_interp if method == "nearest" else _C_ops.bilinear_interp
    o = op(xt, None, None, None, "NCHW", -1, oh, ow, scale, method, ac, am)
    g = f(*o.shape); (o * T(g, False)).sum().backward()
    case(n, {"x": x, "out_grad": g}, {"interp_method": method, "out_h": oh, "out_w": ow, "scale": scale,
                                      "align_corners": ac, "align_mode": am}, {"out": o, "x_grad": xt.grad})
# conv2d_transpose through the op itself, so the attributes recorded are the op's: stride 2
# with 4-element paddings and output_padding, groups with dilation, output_size, SAME (which
# drops the dilation) in NHWC, VALID, and the depthwise op (groups = C, one filter per channel)
for n, xs, ws, st, pads, opad, osize, alg, groups, dil, fmt in [
        ("conv2d_transpose_stride2_outpad", (2, 4, 3, 4), (4, 3, 3, 3), [2, 2], [1, 2, 0, 1], [1, 0], [], "EXPLICIT", 1, [1, 1], "NCHW"),
        ("conv2d_transpose_groups_dilation", (1, 6, 4, 5), (6, 2, 3, 2), [1, 2], [1, 1], [], [], "EXPLICIT", 3, [2, 1], "NCHW"),
        ("conv2d_transpose_output_size", (2, 2, 3, 3), (2, 3, 3, 3), [2, 3], [0, 1], [], [8, 9], "EXPLICIT", 1, [1, 1], "NCHW"),
        ("conv2d_transpose_same_nhwc", (1, 3, 5, 2), (2, 3, 3, 3), [2, 2], [0, 0], [], [], "SAME", 1, [2, 2], "NHWC"),
        ("conv2d_transpose_valid", (1, 2, 3, 2), (2, 2, 2, 3), [3, 1], [2, 2], [], [], "VALID", 1, [1, 1], "NCHW"),
        ("depthwise_conv2d_transpose", (2, 4, 3, 3), (4, 1, 3, 3), [2, 2], [1, 1], [1, 1], [], "EXPLICIT", 4, [1, 1], "NCHW")]:
    x, w = f(*xs), f(*ws)
    xt, wt = T(x), T(w)
    op = _C_ops.depthwise_conv2d_transpose if n.startswith("depthwise") else _C_ops.conv2d_transpose
    o = op(xt, wt, st, pads, opad, osize, alg, groups, dil, fmt)
    g = f(*o.shape); (o * T(g, False)).sum().backward()
    case(n, {"x": x, "filter": w, "out_grad": g},
         {"strides": st, "paddings": pads, "output_padding": opad, "output_size": osize, "padding_algorithm": alg,
          "groups": groups, "dilations": dil, "data_format": fmt},
         {"out": o, "x_grad": xt.grad, "filter_grad": wt.grad})
# max_pool2d_with_index through the op (kernel_size, strides, paddings, global_pooling,
# adaptive, ceil_mode): stride 2 with padding, ties inside a window (values rounded to halves, so
# the first maximum in row-major order must get the gradient), ceil_mode, adaptive pooling to a
# size that does not divide the input and to one larger than it, and global pooling
for n, xs, ks, st, pads, glob, adap, ceil in [
        ("max_pool2d_with_index_stride2_pad", (2, 3, 7, 6), [3, 3], [2, 2], [1, 1], False, False, False),
        ("max_pool2d_with_index_ties", (1, 2, 6, 6), [2, 3], [1, 2], [0, 1], False, False, False),
        ("max_pool2d_with_index_ceil", (1, 2, 7, 7), [2, 2], [2, 2], [0, 0], False, False, True),
        ("max_pool2d_with_index_adaptive", (2, 2, 7, 5), [3, 2], [1, 1], [0, 0], False, True, False),
        ("max_pool2d_with_index_adaptive_up", (1, 2, 3, 4), [5, 6], [1, 1], [0, 0], False, True, False),
        ("max_pool2d_with_index_global", (2, 3, 4, 5), [1, 1], [1, 1], [0, 0], True, False, False)]:
    x = f(*xs)
    if n.endswith("ties"):
        x = np.round(x * 2) / 2
    xt = T(x)
    o, m = _C_ops.max_pool2d_with_index(xt, ks, st, pads, glob, adap, ceil)
    g = f(*o.shape); (o * T(g, False)).sum().backward()
    case(n, {"x": x, "out_grad": g},
         {"kernel_size": ks, "strides": st, "paddings": pads, "global_pooling": glob, "adaptive": adap,
          "ceil_mode": ceil},
         {"out": o, "mask": m, "x_grad": xt.grad})
# pixel_shuffle and pixel_unshuffle in both layouts, unfold with 4 unequal paddings ([top,
# left, bottom, right]), stride and dilation, and maxout on NCHW and NHWC with tied channels
# (values rounded to halves, so the first channel of a tied group must get the gradient)
for n, fn, xs, attrs in [
        ("pixel_shuffle", lambda t: _C_ops.pixel_shuffle(t, 2, "NCHW"), (2, 8, 2, 3), {"factor": 2, "data_format": "NCHW"}),
        ("pixel_shuffle_nhwc", lambda t: _C_ops.pixel_shuffle(t, 3, "NHWC"), (1, 2, 2, 18), {"factor": 3, "data_format": "NHWC"}),
        ("pixel_unshuffle", lambda t: _C_ops.pixel_unshuffle(t, 2, "NCHW"), (2, 3, 4, 6), {"factor": 2, "data_format": "NCHW"}),
        ("pixel_unshuffle_nhwc", lambda t: _C_ops.pixel_unshuffle(t, 2, "NHWC"), (1, 4, 2, 3), {"factor": 2, "data_format": "NHWC"}),
        ("unfold", lambda t: _C_ops.unfold(t, [3, 2], [2, 1], [1, 0, 2, 1], [1, 2]), (2, 3, 6, 5),
         {"kernel_sizes": [3, 2], "strides": [2, 1], "paddings": [1, 0, 2, 1], "dilations": [1, 2]}),
        ("unfold_plain", lambda t: _C_ops.unfold(t, [2, 2], [2, 2], [0, 0, 0, 0], [1, 1]), (1, 2, 4, 5),
         {"kernel_sizes": [2, 2], "strides": [2, 2], "paddings": [0, 0, 0, 0], "dilations": [1, 1]}),
        ("maxout", lambda t: _C_ops.maxout(t, 3, 1), (2, 6, 3, 4), {"groups": 3, "axis": 1}),
        ("maxout_nhwc", lambda t: _C_ops.maxout(t, 2, -1), (2, 3, 2, 4), {"groups": 2, "axis": -1})]:
    x = f(*xs)
    if n.startswith("maxout"):
        x = np.round(x) / 2
    xt = T(x); o = fn(xt)
    g = f(*o.shape); (o * T(g, False)).sum().backward()
    case(n, {"x": x, "out_grad": g}, attrs, {"out": o, "x_grad": xt.grad})
# pool3d through the op: max with 6 unequal paddings and stride 2 (ties from values rounded to
# halves), average counting the padding (exclusive false) with ceil_mode, exclusive average in
# NDHWC, SAME, adaptive average to a size that does not divide the input, and global max
for n, xs, kind, ks, st, pads, ceil, excl, fmt, glob, adap, alg in [
        ("pool3d_max_pad", (2, 2, 5, 6, 5), "max", [2, 3, 2], [2, 2, 1], [1, 0, 1, 2, 0, 1], False, True, "NCDHW", False, False, "EXPLICIT"),
        ("pool3d_avg_ceil_inclusive", (1, 2, 5, 5, 6), "avg", [2, 2, 3], [2, 2, 2], [1, 1, 0], True, False, "NCDHW", False, False, "EXPLICIT"),
        ("pool3d_avg_ndhwc", (2, 4, 5, 3, 2), "avg", [3, 2, 2], [1, 2, 2], [1, 1, 1], False, True, "NDHWC", False, False, "EXPLICIT"),
        ("pool3d_max_same", (1, 2, 5, 4, 7), "max", [3, 3, 2], [2, 2, 3], [0, 0, 0], False, True, "NCDHW", False, False, "SAME"),
        ("pool3d_avg_adaptive", (1, 3, 5, 7, 4), "avg", [2, 3, 3], [1, 1, 1], [0, 0, 0], False, True, "NCDHW", False, True, "EXPLICIT"),
        ("pool3d_max_global", (2, 2, 3, 4, 2), "max", [1, 1, 1], [1, 1, 1], [0, 0, 0], False, True, "NCDHW", True, False, "EXPLICIT")]:
    x = f(*xs)
    if kind == "max":
        x = np.round(x * 2) / 2
    xt = T(x)
    o = _C_ops.pool3d(xt, ks, st, pads, ceil, excl, fmt, kind, glob, adap, alg)
    g = f(*o.shape); (o * T(g, False)).sum().backward()
    case(n, {"x": x, "out_grad": g},
         {"pooling_type": kind, "kernel_size": ks, "strides": st, "paddings": pads, "ceil_mode": ceil,
          "exclusive": excl, "data_format": fmt, "global_pooling": glob, "adaptive": adap, "padding_algorithm": alg},
         {"out": o, "x_grad": xt.grad})

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'paddle_model_kernels.json')
json.dump({"paddle": paddle.__version__, "cases": cases}, open(out, 'w'), indent=None)
print(len(cases), "cases", paddle.__version__)
