# Records Paddle 3.3.1's outputs for the kernels that real programs used and the executor lacked:
# increment (a step counter: int64, float, 0-d), share_data_ (an alias), norm (the l2
# normalization `paddle.nn.functional.normalize`'s legacy op and F.normalize-like layers lower
# to) and its grad, index_add and its grads, repeat_interleave (an int repeat, or a repeat per
# index) and its grads, in the layout of paddle_model_kernels.json, for
# src/exec/kernels/tests/kernels_paddle_misc.rs. Run once with the interop venv
# (`python tests/exec_fixtures/paddle_misc_kernels.py`); the numbers are committed, Paddle is
# not a test dependency. Inputs hold the points where a convention shows: negative axes, a
# zero vector under norm (epsilon keeps it finite), repeated indices in index_add (the adds
# accumulate), a repeat count of 0, float64.
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

# increment(x) {value}: x + value, x of one element, its dtype kept
for n, x, v in [("increment_int64", np.array([7], 'int64'), 1.0), ("increment_f32", np.array([1.5], 'float32'), -0.25),
                ("increment_0d_int32", np.array(4, 'int32'), 3.0), ("increment_f64", np.array([[2.0]], 'float64'), 0.5)]:
    case(n, {"x": x}, {"value": v}, {"out": _C_ops.increment(T(x, False), v)})

# share_data_(x): out is x (a static-graph op: run in a program)
def share_data(x):
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        v = paddle.static.data("x", list(x.shape), str(x.dtype))
        out = _C_ops.share_data_(v)
    exe = paddle.static.Executor(paddle.CPUPlace())
    (r,) = exe.run(main, feed={"x": x}, fetch_list=[out])
    paddle.disable_static()
    return np.asarray(r)
for n, x in [("share_data_f32", f(2, 3)), ("share_data_int64", np.arange(5, dtype='int64'))]:
    case(n, {"x": x}, {}, {"out": share_data(x)})

# norm(x) {axis, epsilon, is_test}: out = x / sqrt(sum(x², axis) + epsilon), norm that root with
# axis kept as 1; grad through out (norm_grad reads x, norm, out_grad)
zero_row = f(3, 4); zero_row[1] = 0.0
for n, x, axis, eps in [("norm_axis1", f(2, 3, 4), 1, 1e-10), ("norm_last_negative", f(3, 5), -1, 1e-12),
                        ("norm_axis0_zero_vector", zero_row.T.copy(), 0, 1e-10), ("norm_big_eps", f(4, 3), 1, 0.5),
                        ("norm_f64", f(2, 4).astype('float64'), 1, 1e-10)]:
    xt = T(x); out, nrm = _C_ops.norm(xt, axis, eps, False); g = rs.randn(*out.shape).astype(x.dtype)
    backward(out, g)
    case(n, {"x": x, "out_grad": g}, {"axis": axis, "epsilon": eps}, {"out": out, "norm": nrm, "x_grad": xt.grad})

# index_add(x, index, add_value) {axis}: out = x, then add_value's slice i added at index[i]
# along axis (a repeated index gets every slice); x_grad = out_grad, add_value_grad = out_grad's
# slices at index
for n, x, idx, axis in [("index_add_rows", f(5, 3), np.array([1, 3, 1], 'int64'), 0),
                        ("index_add_axis1_int32", f(2, 4, 3), np.array([0, 3], 'int32'), 1),
                        ("index_add_negative_axis", f(3, 4), np.array([2, 2, 0, 1, 3], 'int64'), -1),
                        ("index_add_f64", f(4, 2).astype('float64'), np.array([0, 0], 'int64'), 0)]:
    vshape = list(x.shape); vshape[axis] = len(idx)
    v = rs.randn(*vshape).astype(x.dtype)
    xt, vt = T(x), T(v); o = paddle.index_add(xt, T(idx, False), axis, vt); g = rs.randn(*o.shape).astype(x.dtype)
    backward(o, g)
    case(n, {"x": x, "index": idx, "add_value": v, "out_grad": g}, {"axis": axis}, {"out": o, "x_grad": xt.grad, "add_value_grad": vt.grad})

# repeat_interleave(x) {repeats, axis}: each slice along axis repeated `repeats` times in place;
# the grad sums each slice's copies
for n, x, r, axis in [("repeat_interleave_axis1", f(2, 3, 2), 2, 1), ("repeat_interleave_axis0", f(3, 2), 3, 0),
                      ("repeat_interleave_negative_axis", f(2, 3), 2, -1), ("repeat_interleave_f64", f(4).astype('float64'), 2, 0)]:
    xt = T(x); o = paddle.repeat_interleave(xt, r, axis); g = rs.randn(*o.shape).astype(x.dtype)
    backward(o, g)
    case(n, {"x": x, "out_grad": g}, {"repeats": r, "axis": axis}, {"out": o, "x_grad": xt.grad})

# repeat_interleave_with_tensor_index(x, repeats) {axis}: slice i repeated repeats[i] times (0:
# dropped); the grad sums each slice's copies (a dropped slice gets 0)
for n, x, r, axis in [("repeat_interleave_tensor_axis0", f(3, 2), np.array([2, 0, 3], 'int64'), 0),
                      ("repeat_interleave_tensor_axis1_int32", f(2, 4), np.array([1, 2, 1, 0], 'int32'), 1),
                      ("repeat_interleave_tensor_negative_axis", f(2, 2, 3), np.array([3, 1, 2], 'int64'), -1)]:
    xt = T(x); o = paddle.repeat_interleave(xt, T(r, False), axis); g = rs.randn(*o.shape).astype(x.dtype)
    backward(o, g)
    case(n, {"x": x, "repeats": r, "out_grad": g}, {"axis": axis}, {"out": o, "x_grad": xt.grad})

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "paddle_misc_kernels.json"), "w") as fh:
    json.dump({"paddle": paddle.__version__, "cases": cases}, fh, separators=(",", ":"))
print(len(cases), "cases")
