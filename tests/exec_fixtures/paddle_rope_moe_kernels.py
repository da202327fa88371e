# Records Paddle 3.3.1's outputs for the kernels the GPT, LLaMA, MoE and WGAN-GP models lacked
# (cos, sin; masked_fill; numel; scatter_nd_add, nonzero; spectral_norm; warpctc; the double
# grads of tanh, add and matmul), in the layout of paddle_model_kernels.json, for
# src/exec/kernels/tests/kernels_paddle_rope_moe.rs. Run once with the interop venv
# (`python tests/exec_fixtures/paddle_rope_moe_kernels.py`); the numbers are committed, Paddle is
# not a test dependency. Inputs hold the points where a convention shows: angles far from 0
# (range reduction), masks broadcast against x and x broadcast against the mask, repeated and
# negative scatter indices, an index addressing no dimension (whole-tensor adds), empty tensors.
import json, os, numpy as np, paddle
from paddle import _C_ops
paddle.set_device('cpu')
rs = np.random.RandomState(29)
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

# cos/sin: RoPE-like angles (position × inverse frequency, up to hundreds of radians), zero, ±π,
# in float32 and float64
ang = (np.arange(6)[:, None] * (10000.0 ** (-np.arange(4) / 4.0))[None, :]).astype('float32')
big = np.array([0.0, np.pi, -np.pi, 1e3, -257.5, 3e4], 'float32')
for fn, name in [(_C_ops.cos, "cos"), (_C_ops.sin, "sin")]:
    for n, x in [(f"{name}_rope", ang), (f"{name}_large", big), (f"{name}_f64", f(3, 4).astype('float64') * 7)]:
        xt = T(x); o = fn(xt); g = rs.randn(*o.shape).astype(x.dtype); backward(o, g)
        case(n, {"x": x, "out_grad": g}, {}, {"out": o, "x_grad": xt.grad})

# masked_fill(x, mask, value): value a 0-d or [1] tensor; the mask broadcast against x (a causal
# [s, s] mask under [b, h, s, s] scores), x broadcast against the mask (x_grad summed back),
# float64. value_grad is recorded from the grad kernel called directly (the sum of out_grad
# where the mask holds): Paddle 3.3.1's autograd reports 0 for it, the kernel the sum.
causal = np.triu(np.ones((4, 4), bool), 1)
for n, x, mask, val in [("masked_fill_causal", f(2, 2, 4, 4), causal, np.array(-1e9, 'float32')),
                        ("masked_fill_same_shape", f(3, 5), rs.rand(3, 5) > 0.5, np.array([2.5], 'float32')),
                        ("masked_fill_x_broadcast", f(5), rs.rand(3, 5) > 0.4, np.array(-3.0, 'float32')),
                        ("masked_fill_f64", f(2, 3).astype('float64'), np.array([True, False, True]), np.array(0.5, 'float64'))]:
    xt = T(x); o = _C_ops.masked_fill(xt, T(mask, False), T(val, False)); g = rs.randn(*o.shape).astype(x.dtype)
    backward(o, g)
    dx, dv = _C_ops.masked_fill_grad(T(x, False), T(mask, False), T(val, False), T(g, False))
    np.testing.assert_array_equal(dx.numpy(), xt.grad.numpy())
    case(n, {"x": x, "mask": mask, "value": val, "out_grad": g}, {}, {"out": o, "x_grad": xt.grad, "value_grad": dv})

# numel: an int64 0-d count, whatever x's dtype; an empty tensor
for n, x in [("numel", f(3, 4)), ("numel_f64_3d", f(2, 3, 2).astype('float64')), ("numel_int", np.arange(7, dtype='int32')),
             ("numel_empty", np.zeros((0, 3), 'float32')), ("numel_scalar", np.array(1.5, 'float32'))]:
    case(n, {"x": x}, {}, {"out": _C_ops.numel(T(x, False))})

# scatter_nd_add(x, index, updates): rows (MoE dispatch, index [n, 1]) with a repeated row,
# single elements with repeats, a negative index, an index of length 0 (each update is added to
# all of x), float64. The grads: x_grad is out_grad, updates_grad gathers it at index.
for n, x, idx, ushape in [("scatter_nd_add_rows", f(5, 3), np.array([[1], [3], [1], [0]], 'int64'), (4, 3)),
                          ("scatter_nd_add_elements", f(3, 4), np.array([[0, 1], [2, 3], [0, 1], [-1, -4]], 'int64'), (4,)),
                          ("scatter_nd_add_3d_slices", f(2, 3, 4), np.array([[[1, 2], [0, 0]], [[1, 2], [-2, 1]]], 'int32'), (2, 2, 4)),
                          ("scatter_nd_add_empty_index", f(2, 3), np.zeros((3, 0), 'int64'), (3, 2, 3)),
                          ("scatter_nd_add_f64", f(4, 2).astype('float64'), np.array([[2], [2], [-1]], 'int64'), (3, 2))]:
    up = rs.randn(*ushape).astype(x.dtype)
    xt, ut = T(x), T(up); o = _C_ops.scatter_nd_add(xt, T(idx, False), ut); g = rs.randn(*o.shape).astype(x.dtype)
    backward(o, g)
    case(n, {"x": x, "index": idx, "updates": up, "out_grad": g}, {}, {"out": o, "x_grad": xt.grad, "updates_grad": ut.grad})

# nonzero: the coordinates of true (nonzero) elements, row-major; a bool mask, floats with -0.0
# and a subnormal, an all-false mask ([0, rank]), an empty tensor
for n, c in [("nonzero_bool_2d", np.array([[True, False], [False, True], [True, True]])),
             ("nonzero_float", np.array([0., 1.5, -0.0, 1e-40, 2.], 'float32')),
             ("nonzero_int_3d", np.array([[[0, 3], [3, 0]], [[0, 0], [-3, 0]], [[0, 0], [3, 3]]], 'int32')),
             ("nonzero_none", np.zeros((3, 2), bool)), ("nonzero_empty", np.zeros((2, 0), bool))]:
    case(n, {"condition": c}, {}, {"out": _C_ops.nonzero(T(c, False))})

# spectral_norm: the weight as a matrix with dim first (dim 0 and 1 of a linear weight, a conv
# weight, a 3-D weight at its middle dimension), 0, 1 and 3 power iterations, float64. Paddle's
# grad is its kernel's formula (see kernels/spectral_norm.rs), recorded as it computes it.
for n, shape, dim, iters, dt in [("spectral_norm_linear_dim1", (6, 8), 1, 1, 'float32'),
                                 ("spectral_norm_linear_dim0", (5, 3), 0, 3, 'float32'),
                                 ("spectral_norm_conv", (4, 2, 3, 3), 0, 1, 'float32'),
                                 ("spectral_norm_3d_middle", (2, 5, 3), 1, 2, 'float32'),
                                 ("spectral_norm_no_iteration", (3, 4), 0, 0, 'float32'),
                                 ("spectral_norm_f64", (4, 6), 1, 1, 'float64')]:
    w = f(*shape).astype(dt); h = shape[dim]
    u, v = f(h).astype(dt), f(int(np.prod(shape)) // h).astype(dt)
    wt = T(w); o = _C_ops.spectral_norm(wt, T(u, False), T(v, False), dim, iters, 1e-12)
    g = f(*shape).astype(dt); backward(o, g)
    case(n, {"weight": w, "u": u, "v": v, "out_grad": g}, {"dim": dim, "power_iters": iters, "eps": 1e-12},
         {"out": o, "weight_grad": wt.grad})

# Double grads (the WGAN-GP gradient penalty differentiates the critic's input gradient):
# tanh_double_grad, add_double_grad, matmul_double_grad. Eager Paddle does not expose them, so a
# static program differentiates a gradient (tanh, add or matmul, its grad for a fed out_grad,
# then the grads of Σ grad·w) and the one double-grad op it holds is run on the fed inputs: its
# operands and results are fetched, under the dialect's names.
paddle.enable_static()
def double_grad(name, opname, feeds, build, operand_names, result_names, attrs):
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        vs = {k: paddle.static.data(k, list(v.shape), str(v.dtype)) for k, v in feeds.items()}
        for v in vs.values():
            v.stop_gradient = False
        build(vs)
    (op,) = [op for op in main.global_block().ops if op.name() == opname]
    ins, outs = list(op.operands_source()), list(op.results())
    got = paddle.static.Executor().run(main, feed=feeds, fetch_list=ins + outs)
    case(name, dict(zip(operand_names, got[:len(ins)])), attrs, dict(zip(result_names, got[len(ins):])))
def tanh_build(v):
    (dx,) = paddle.static.gradients([paddle.tanh(v['x'])], [v['x']], target_gradients=[v['dout']])
    paddle.static.gradients([(dx * v['w']).sum()], [v['x'], v['dout']])
for n, shape in [("tanh_double_grad", (3, 4)), ("tanh_double_grad_large", (2, 5))]:
    x = f(*shape) * (1 if n == "tanh_double_grad" else 4)
    double_grad(n, "pd_op.tanh_double_grad", dict(x=x, dout=f(*shape), w=f(*shape)), tanh_build,
                ["out", "grad_out", "grad_x_grad"], ["out_grad", "grad_out_grad"], {})
def add_build(v):
    dx, dy = paddle.static.gradients([v['x'] + v['y']], [v['x'], v['y']], target_gradients=[v['dout']])
    paddle.static.gradients([(dx * v['wx']).sum() + (dy * v['wy']).sum()], [v['dout']])
for n, xs, ys in [("add_double_grad_bias", (4, 3), (3,)), ("add_double_grad_same", (2, 3), (2, 3)),
                  ("add_double_grad_middle", (2, 3, 4), (3, 1))]:
    double_grad(n, "pd_op.add_double_grad", dict(x=f(*xs), y=f(*ys), dout=f(*xs), wx=f(*xs), wy=f(*ys)), add_build,
                ["y", "grad_out", "grad_x_grad", "grad_y_grad"], ["grad_out_grad"], {"axis": -1})
def matmul_build(tx, ty):
    def build(v):
        out = paddle.matmul(v['x'], v['y'], tx, ty)
        dx, dy = paddle.static.gradients([out], [v['x'], v['y']], target_gradients=[v['dout']])
        paddle.static.gradients([(dx * v['wx']).sum() + (dy * v['wy']).sum()], [v['x'], v['y'], v['dout']])
    return build
for n, xs, ys, os_, tx, ty in [("matmul_double_grad", (3, 6), (6, 4), (3, 4), False, False),
                               ("matmul_double_grad_column", (5, 8), (8, 1), (5, 1), False, False),
                               ("matmul_double_grad_transposed", (6, 3), (4, 6), (3, 4), True, True),
                               ("matmul_double_grad_batched", (2, 3, 4), (4, 5), (2, 3, 5), False, False)]:
    double_grad(n, "pd_op.matmul_double_grad", dict(x=f(*xs), y=f(*ys), dout=f(*os_), wx=f(*xs), wy=f(*ys)),
                matmul_build(tx, ty), ["x", "y", "grad_out", "grad_x_grad", "grad_y_grad"],
                ["x_grad", "y_grad", "grad_out_grad"], {"transpose_x": tx, "transpose_y": ty})

# warpctc (time-major [T, B, C] logits, padded labels with lengths): sequences shorter than T,
# a repeated label (a blank must separate its copies), an empty label, norm_by_times. Eager
# Paddle returns only the loss, so a static program runs warpctc and warpctc_grad (for the loss
# weighted by a fed loss_grad), and both ops' operands and results are fetched.
def ctc(name, logits, label, logits_length, labels_length, blank, norm_by_times):
    feeds = dict(logits=logits, label=label, logits_length=logits_length, labels_length=labels_length,
                 w=f(logits.shape[1], 1))
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        vs = {k: paddle.static.data(k, list(v.shape), str(v.dtype)) for k, v in feeds.items()}
        vs['logits'].stop_gradient = False
        loss = _C_ops.warpctc(vs['logits'], vs['label'], vs['logits_length'], vs['labels_length'], blank, norm_by_times)
        paddle.static.gradients([(loss * vs['w']).sum()], [vs['logits']])
    ops = {op.name(): op for op in main.global_block().ops}
    fwd, bwd = ops["pd_op.warpctc"], ops["pd_op.warpctc_grad"]
    fetch = list(fwd.results()) + list(bwd.operands_source()) + list(bwd.results())
    r = paddle.static.Executor().run(main, feed=feeds, fetch_list=fetch)
    assert np.array_equal(r[1], r[4])
    case(name, {"logits": logits, "label": label, "logits_length": logits_length, "labels_length": labels_length,
                "loss_grad": r[5]}, {"blank": blank, "norm_by_times": norm_by_times},
         {"loss": r[0], "warpctcgrad": r[1], "logits_grad": r[6]})
lab = np.array([[1, 2, 3], [3, 3, 0], [2, 0, 0], [4, 1, 4]], 'int32')
for n, blank, nbt, lens in [("warpctc", 0, False, [6, 4, 5, 6]), ("warpctc_norm_by_times", 0, True, [6, 4, 5, 6])]:
    ctc(n, f(6, 4, 5), lab, np.array(lens, 'int64'), np.array([3, 2, 1, 3], 'int64'), blank, nbt)
ctc("warpctc_empty_label_blank_last", f(5, 2, 4), np.array([[0, 1], [2, 2]], 'int32'), np.array([5, 3], 'int64'),
    np.array([0, 2], 'int64'), 3, False)

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'paddle_rope_moe_kernels.json')
json.dump({"paddle": paddle.__version__, "cases": cases}, open(out, 'w'), indent=None)
print(len(cases), "cases", paddle.__version__)
