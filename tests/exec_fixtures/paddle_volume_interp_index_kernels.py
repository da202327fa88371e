# Records Paddle 3.3.1's outputs for the kernels of volume, upsampling and indexing models irw
# lacked (conv3d, bicubic_interp, put_along_axis's mean/amin/amax, index_put, pool2d adaptive to
# a larger output), in the layout of paddle_model_kernels.json, for
# src/exec/kernels/tests/kernels_paddle_volume_interp_index.rs. Run once with the interop venv
# (`python tests/exec_fixtures/paddle_volume_interp_index_kernels.py`); the numbers are
# committed, Paddle is not a test dependency. Each case records the forward outputs and the
# input gradients for a random `out_grad`, in float32 and (where the kernel has an f64 path)
# float64.
import json, os, numpy as np, paddle
from paddle import _C_ops
paddle.set_device('cpu')
rs = np.random.RandomState(31)
def T(a, grad=True):
    t = paddle.to_tensor(a); t.stop_gradient = not grad; return t
def enc(t):
    a = t.numpy() if hasattr(t, 'numpy') else np.asarray(t)
    return {"shape": list(a.shape), "dtype": str(a.dtype), "values": a.astype(np.float64).ravel().tolist() if a.dtype != np.bool_ else a.ravel().astype(int).tolist()}
cases = []
def case(name, inputs, attrs, outputs):
    cases.append({"name": name, "inputs": {k: enc(v) for k, v in inputs.items()}, "attrs": attrs, "outputs": {k: enc(v) for k, v in outputs.items()}})
f = lambda *s: rs.randn(*s).astype('float32')
def backward(o, g):
    (o * T(g, False)).sum().backward()

# conv3d: explicit symmetric and asymmetric paddings, strides and dilations per dimension,
# groups, SAME (with a stride that leaves an odd padding) and VALID, NDHWC, a 1x1x1 filter, f64.
for n, xs, ws, st, pd, alg, dil, grp, fmt, dt in [
        ("conv3d_basic", (2, 3, 5, 6, 4), (4, 3, 3, 3, 3), [1, 1, 1], [1, 1, 1], "EXPLICIT", [1, 1, 1], 1, "NCDHW", "float32"),
        ("conv3d_asym_stride_dil", (1, 2, 7, 6, 8), (3, 2, 2, 3, 2), [2, 1, 3], [0, 1, 2, 0, 1, 1], "EXPLICIT", [1, 2, 2], 1, "NCDHW", "float32"),
        ("conv3d_groups", (1, 4, 4, 5, 5), (6, 2, 3, 1, 3), [1, 2, 1], [1, 0, 1], "EXPLICIT", [1, 1, 1], 2, "NCDHW", "float32"),
        ("conv3d_same", (1, 2, 5, 7, 6), (2, 2, 3, 2, 4), [2, 2, 3], [3, 3, 3], "SAME", [2, 2, 2], 1, "NCDHW", "float32"),
        ("conv3d_valid_ndhwc", (2, 5, 6, 4, 3), (3, 3, 2, 2, 2), [1, 2, 1], [5, 5, 5], "VALID", [2, 1, 1], 1, "NDHWC", "float32"),
        ("conv3d_pointwise_f64", (2, 3, 2, 3, 4), (5, 3, 1, 1, 1), [1, 1, 1], [0, 0, 0], "EXPLICIT", [1, 1, 1], 1, "NCDHW", "float64"),
        ("conv3d_depthwise_f64", (1, 3, 4, 4, 4), (3, 1, 3, 3, 3), [1, 1, 1], [1, 2, 1], "EXPLICIT", [1, 1, 2], 3, "NCDHW", "float64")]:
    x = f(*xs).astype(dt); w = f(*ws).astype(dt)
    xt, wt = T(x), T(w)
    o = _C_ops.conv3d(xt, wt, st, pd, alg, grp, dil, fmt)
    g = f(*o.shape).astype(dt); backward(o, g)
    case(n, {"input": x, "filter": w, "out_grad": g},
         {"strides": st, "paddings": pd, "padding_algorithm": alg, "groups": grp, "dilations": dil, "data_format": fmt},
         {"out": o, "input_grad": xt.grad, "filter_grad": wt.grad})

# bicubic_interp: up and down, align_corners true and false, by size and by scale (whose ratio
# is 1/scale, not in/out), a one-pixel axis, taps clamped at the borders; f32 and f64.
for n, xs, size, scale, ac, dt in [
        ("bicubic_up_align", (2, 2, 4, 5), [7, 9], None, True, "float32"),
        ("bicubic_up_half_pixel", (1, 3, 4, 5), [7, 9], None, False, "float32"),
        ("bicubic_down_half_pixel", (1, 2, 9, 7), [4, 3], None, False, "float32"),
        ("bicubic_down_align", (1, 2, 9, 7), [4, 3], None, True, "float32"),
        ("bicubic_scale", (1, 1, 3, 4), None, [1.7, 2.5], False, "float32"),
        ("bicubic_one_pixel", (1, 2, 1, 3), [3, 1], None, False, "float32"),
        ("bicubic_up_align_f64", (1, 2, 3, 4), [6, 5], None, True, "float64"),
        ("bicubic_half_pixel_f64", (1, 1, 5, 4), [3, 7], None, False, "float64")]:
    x = f(*xs).astype(dt); xt = T(x)
    out_h, out_w = size if size else (0, 0)
    o = _C_ops.bicubic_interp(xt, None, None, None, "NCHW", 0, out_h, out_w, scale or [], "bicubic", ac, 0)
    g = f(*o.shape).astype(dt); backward(o, g)
    case(n, {"x": x, "out_grad": g}, {"out_h": out_h, "out_w": out_w, "scale": scale or [], "align_corners": ac, "align_mode": 0},
         {"output": o, "x_grad": xt.grad})

# put_along_axis with reduce mean, amin, amax, include_self true and false: repeated indices
# (several values meet at a position), values tied with arr's element and with each other
# (how the extremum's gradient is shared), an untouched position, along axis 0 and 1; f64 too.
arr = np.round(f(3, 5), 1); vals = np.round(f(3, 3), 1)
idx = np.array([[0, 4, 0], [2, 2, 1], [3, 1, 3]], 'int64')
vals[0, 0] = arr[0, 0]; vals[1, 0] = vals[1, 1] = 2.5; vals[2, 0] = vals[2, 2] = -2.5
arr[2, 3] = -2.5; vals[0, 1] = arr[0, 4] = 3.0
idx0 = np.array([[1, 0, 2, 2, 0], [1, 0, 0, 2, 0]], 'int64'); vals0 = np.round(f(2, 5), 1); vals0[1, 0] = vals0[0, 0]
for red in ["mean", "amin", "amax"]:
    for incl in [True, False]:
        for n, a, i, v, axis, dt in [("", arr, idx, vals, 1, "float32"), ("_axis0", arr, idx0, vals0, 0, "float32"),
                                     ("_f64", arr, idx, vals, 1, "float64")]:
            a, v = a.astype(dt), v.astype(dt)
            at, vt = T(a), T(v); o = _C_ops.put_along_axis(at, T(i, False), vt, axis, red, incl)
            g = f(*o.shape).astype(dt); backward(o, g)
            case("put_along_axis_%s%s%s" % (red, "" if incl else "_exclude_self", n),
                 {"arr": a, "indices": i, "values": v, "out_grad": g}, {"axis": axis, "reduce": red, "include_self": incl},
                 {"out": o, "arr_grad": at.grad, "values_grad": vt.grad})

# index_put, accumulate false and true: two index tensors broadcasting against each other with a
# repeated position (the last value stays; the grad reads every one) and a negative index; one
# index naming whole rows with a value broadcast along them; index tensors of rank 2; a bool
# mask; a scalar-like value; int32 indices; f64.
x34 = f(3, 4); x245 = f(2, 4, 5)
for n, x, idx, v in [
        ("index_put_pairs", x34, [np.array([0, 2, 0], 'int64'), np.array([1, -1, 1], 'int64')], f(3)),
        ("index_put_broadcast_indices", x34, [np.array([[0], [2]], 'int64'), np.array([3, 0, 1], 'int64')], f(2, 3)),
        ("index_put_rows", x34, [np.array([2, 0], 'int64')], f(4)),
        ("index_put_rows_3d_int32", x245, [np.array([1, -2, 1], 'int32'), np.array([3, 0, 3], 'int32')], f(3, 5)),
        ("index_put_one_value", x245, [np.array([[0, 1], [1, 1]], 'int64')], f(1)),
        ("index_put_mask", x34, [x34 > 0.3], f(1)),
        ("index_put_mask_rows", x245, [np.array([[True, False, False, True], [False, True, False, False]])], f(5)),
        ("index_put_pairs_f64", x34.astype('float64'), [np.array([0, 2, 0], 'int64'), np.array([1, -1, 1], 'int64')], f(3).astype('float64'))]:
    for acc in [False, True]:
        xt, vt = T(x), T(v)
        o = _C_ops.index_put(xt, [T(i, False) for i in idx], vt, acc)
        g = f(*o.shape).astype(x.dtype); backward(o, g)
        ins = {"x": x, "value": v, "out_grad": g}
        for k, i in enumerate(idx):
            ins["index%d" % k] = i
        case(n + ("_accumulate" if acc else ""), ins, {"accumulate": acc},
             {"out": o, "x_grad": xt.grad, "value_grad": vt.grad})

# pool2d adaptive average to an output larger than the input (each input element then feeds
# several windows), one dimension growing and the other shrinking, NHWC, f64. Not max: Paddle
# 3.3.1's CPU pool2d leaves -FLT_MAX in most of such an output (paddle.nn.AdaptiveMaxPool2D runs
# max_pool2d_with_index instead, which pools), and irw refuses it.
for n, xs, out, kind, fmt, dt in [
        ("pool2d_adaptive_grow_avg", (2, 2, 3, 4), [5, 7], "avg", "NCHW", "float32"),
        ("pool2d_adaptive_grow_shrink_avg", (1, 2, 2, 7), [5, 3], "avg", "NCHW", "float32"),
        ("pool2d_adaptive_grow_avg_nhwc", (1, 3, 4, 2), [6, 5], "avg", "NHWC", "float32"),
        ("pool2d_adaptive_grow_avg_f64", (1, 2, 2, 3), [5, 4], "avg", "NCHW", "float64")]:
    x = f(*xs).astype(dt); xt = T(x)
    o = _C_ops.pool2d(xt, out, [1, 1], [0, 0], False, True, fmt, kind, False, True, "EXPLICIT")
    g = f(*o.shape).astype(dt); backward(o, g)
    case(n, {"x": x, "out_grad": g}, {"kernel_size": out, "pooling_type": kind, "data_format": fmt},
         {"out": o, "x_grad": xt.grad})

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'paddle_volume_interp_index_kernels.json')
json.dump({"paddle": paddle.__version__, "cases": cases}, open(out, 'w'), indent=None)
print(len(cases), "cases", paddle.__version__)
