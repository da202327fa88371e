# Records Paddle 3.3.1's outputs for the norm, loss, indexing and optimizer kernels the tested
# models lacked (p_norm, sign, bce_loss, nll_loss, kldiv_loss; gather_nd, take_along_axis,
# put_along_axis, scatter, argmax/argmin, topk; fmax/fmin; bilinear, einsum; adadelta_, nadam_, radam_, rprop_,
# asgd_), in
# the layout of paddle_model_kernels.json, for
# src/exec/kernels/tests/kernels_paddle_loss_index.rs. Run once with the interop venv
# (`python tests/exec_fixtures/paddle_loss_index_kernels.py`); the numbers are committed, Paddle
# is not a test dependency. Inputs hold the points where a convention shows: zeros (sign,
# p_norm's grad at 0), tied maxima (p_norm inf, argmax, topk), repeated indices (scatter,
# put_along_axis add, gather_nd's grad), an ignore_index label, probabilities 0 and 1.
import json, os, numpy as np, paddle
from paddle import _C_ops
import paddle.nn.functional as F
paddle.set_device('cpu')
rs = np.random.RandomState(23)
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

# p_norm: porder 2, 1, 3, inf, -inf, 0; a zero row and zero elements (the grad's sign(0));
# |3| and |-3| tied for the inf norm; keepdim, asvector. JSON cannot hold inf: "inf"/"-inf".
x = f(3, 4); x[1, :] = 0.0; x[0, 2] = 0.0; x[2, 0], x[2, 3] = 3.0, -3.0
for n, p, axis, keep, asv in [("p_norm_2", 2.0, 1, False, False), ("p_norm_1_keepdim", 1.0, 0, True, False),
                              ("p_norm_3", 3.0, -1, False, False), ("p_norm_inf", float('inf'), 1, False, False),
                              ("p_norm_neg_inf", float('-inf'), 0, True, False), ("p_norm_0", 0.0, 1, False, False),
                              ("p_norm_asvector", 2.0, -1, False, True), ("p_norm_asvector_keepdim", 2.0, 0, True, True)]:
    xt = T(x); o = _C_ops.p_norm(xt, p, axis, 1e-12, keep, asv)
    g = f(*o.shape) if o.shape else np.array(f(1)[0], 'float32'); backward(o, g)
    case(n, {"x": x, "out_grad": g}, {"porder": str(p) if np.isinf(p) else p, "axis": axis, "epsilon": 1e-12,
                                      "keepdim": keep, "asvector": asv}, {"out": o, "x_grad": xt.grad})
# sign, zeros included (its grad is zero everywhere)
x = np.array([[-2., 0., 0.5], [0., -0.0, 3.]], 'float32')
case("sign", {"x": x}, {}, {"out": paddle.sign(T(x, False))})
# bce_loss: probabilities strictly inside (0, 1), and 0 and 1 themselves (log clamped at -100)
inp = rs.uniform(0.05, 0.95, (3, 4)).astype('float32'); lab = rs.randint(0, 2, (3, 4)).astype('float32')
inp[0, 0], lab[0, 0] = 1.0, 1.0
inp[0, 1], lab[0, 1] = 0.0, 0.0
inp[0, 2], lab[0, 2] = 0.0, 1.0
lab[1, 1] = 0.3
g = f(3, 4); it = T(inp); o = _C_ops.bce_loss(it, T(lab, False)); backward(o, g)
case("bce_loss", {"input": inp, "label": lab, "out_grad": g}, {}, {"out": o, "input_grad": it.grad})
# nll_loss: 2-D and 4-D input, with and without weight, every reduction, an ignored label
for n, shape, red, weighted in [("nll_loss_mean", (5, 4), "mean", False), ("nll_loss_mean_weight", (5, 4), "mean", True),
                                ("nll_loss_sum_weight", (5, 4), "sum", True), ("nll_loss_none", (5, 4), "none", True),
                                ("nll_loss_4d_mean_weight", (2, 4, 2, 3), "mean", True), ("nll_loss_4d_none", (2, 4, 2, 3), "none", False)]:
    inp = f(*shape); lshape = (shape[0],) + shape[2:]
    lab = rs.randint(0, shape[1], lshape).astype('int64'); lab.ravel()[1] = -100
    w = (0.5 + rs.rand(shape[1])).astype('float32')
    it = T(inp); out, tw = _C_ops.nll_loss(it, T(lab, False), T(w, False) if weighted else None, -100, red)
    g = f(*out.shape) if out.shape else np.array(f(1)[0], 'float32'); backward(out, g)
    ins = {"input": inp, "label": lab, "out_grad": g}
    if weighted:
        ins["weight"] = w
    case(n, ins, {"ignore_index": -100, "reduction": red}, {"out": out, "total_weight": tw, "input_grad": it.grad})
# kldiv_loss: every reduction, log_target, a zero label (its term is 0)
x = np.log(rs.dirichlet(np.ones(4), 3)).astype('float32')
lab = rs.dirichlet(np.ones(4), 3).astype('float32'); lab[0, 1] = 0.0
for n, red, lt in [("kldiv_loss_mean", "mean", False), ("kldiv_loss_batchmean", "batchmean", False),
                   ("kldiv_loss_sum", "sum", False), ("kldiv_loss_none", "none", False),
                   ("kldiv_loss_log_target", "batchmean", True), ("kldiv_loss_none_log_target", "none", True)]:
    l = np.log(np.maximum(lab, 1e-3)).astype('float32') if lt else lab
    xt = T(x); o = _C_ops.kldiv_loss(xt, T(l, False), red, lt)
    g = f(*o.shape) if o.shape else np.array(f(1)[0], 'float32'); backward(o, g)
    case(n, {"x": x, "label": l, "out_grad": g}, {"reduction": red, "log_target": lt}, {"out": o, "x_grad": xt.grad})

# ---- indexing ----
# gather_nd: whole slices, single elements, a repeated index (the grad adds), negative indices
x = f(3, 4, 5)
for n, idx in [("gather_nd_slices", np.array([[0, 1], [2, 3], [0, 1]], 'int64')),
               ("gather_nd_elements", np.array([[[1, 2, 3], [0, 0, 4]], [[2, 3, 0], [1, 2, 3]]], 'int64')),
               ("gather_nd_rows", np.array([[2], [0], [2]], 'int32')),
               ("gather_nd_negative", np.array([[-1, 0], [1, -4]], 'int64'))]:
    xt = T(x); o = _C_ops.gather_nd(xt, T(idx, False)); g = f(*o.shape); backward(o, g)
    case(n, {"x": x, "index": idx, "out_grad": g}, {}, {"out": o, "x_grad": xt.grad})
# take_along_axis: indices narrower than arr off the axis, repeats, a negative index
arr = f(3, 5)
for n, idx, axis in [("take_along_axis_1", np.array([[0, 4], [2, 2], [1, 3]], 'int64'), 1),
                     ("take_along_axis_0", np.array([[2, 0, 1, 1, 0], [2, 2, 0, 1, 2]], 'int64'), 0),
                     ("take_along_axis_narrow", np.array([[4, 0, 4]], 'int64'), 1),
                     ("take_along_axis_negative", np.array([[-1], [0], [-5]], 'int64'), 1)]:
    at = T(arr); o = _C_ops.take_along_axis(at, T(idx, False), axis); g = f(*o.shape); backward(o, g)
    case(n, {"arr": arr, "indices": idx, "out_grad": g}, {"axis": axis}, {"out": o, "arr_grad": at.grad})
# put_along_axis: assign (a repeated index: which value lands), add with repeats, include_self false
arr = f(3, 5)
idx = np.array([[0, 4, 0], [2, 2, 1], [3, 1, 3]], 'int64'); vals = f(3, 3)
for n, red, incl in [("put_along_axis_assign", "assign", True), ("put_along_axis_add", "add", True),
                     ("put_along_axis_add_exclude_self", "add", False), ("put_along_axis_mul", "mul", True)]:
    at, vt = T(arr), T(vals); o = _C_ops.put_along_axis(at, T(idx, False), vt, 1, red, incl)
    g = f(*o.shape); backward(o, g)
    case(n, {"arr": arr, "indices": idx, "values": vals, "out_grad": g}, {"axis": 1, "reduce": red, "include_self": incl},
         {"out": o, "arr_grad": at.grad, "values_grad": vt.grad})
# scatter: rows replaced (overwrite: a repeated index keeps the last) or added into zeroed rows
x = f(5, 3); idx = np.array([1, 3, 1, 0], 'int64'); up = f(4, 3)
for n, ow in [("scatter_overwrite", True), ("scatter_add", False)]:
    xt, ut = T(x), T(up); o = _C_ops.scatter(xt, T(idx, False), ut, ow); g = f(*o.shape); backward(o, g)
    case(n, {"x": x, "index": idx, "updates": up, "out_grad": g}, {"overwrite": ow},
         {"out": o, "x_grad": xt.grad, "updates_grad": ut.grad})
# argmax/argmin: ties (the first wins), keepdims, flatten, dtype
x = np.array([[[1., 3., 3.], [2., 2., 0.]], [[5., -1., 5.], [0., 4., 4.]]], 'float32')
for n, fn, axis, keep, flat, dt in [("argmax", _C_ops.argmax, 2, False, False, paddle.int64),
                                    ("argmax_keep_int32", _C_ops.argmax, 1, True, False, paddle.int32),
                                    ("argmax_flatten", _C_ops.argmax, 0, False, True, paddle.int64),
                                    ("argmin", _C_ops.argmin, -1, False, False, paddle.int64),
                                    ("argmin_keep_axis0", _C_ops.argmin, 0, True, False, paddle.int64),
                                    ("argmin_flatten_keep", _C_ops.argmin, 0, True, True, paddle.int32)]:
    # Paddle's eager argmax takes (x, axis, keepdim, dtype); no axis is the op's flatten (axis 0).
    o = fn(T(x, False), None if flat else axis, keep, dt)
    case(n, {"x": x}, {"axis": axis, "keepdims": keep, "flatten": flat, "dtype": str(o.numpy().dtype)}, {"out": o})
# topk: distinct values (indices compared exactly), then ties. Among tied values Paddle's CPU
# order is that of std::nth_element/std::sort, which irw does not reproduce: for the "ties"
# cases Paddle's indices are also recorded as an input, the runner checks that irw's select the
# same values, and the grad is taken through Paddle's.
xd = f(3, 6)
for n, k, axis, largest, srt in [("topk_distinct", 3, -1, True, True), ("topk_distinct_smallest_axis0", 2, 0, False, True)]:
    xt = T(xd); o, ind = _C_ops.topk(xt, k, axis, largest, srt); g = f(*o.shape); backward(o, g)
    case(n, {"x": xd, "out_grad": g}, {"k": k, "axis": axis, "largest": largest, "sorted": srt},
         {"out": o, "indices": ind, "x_grad": xt.grad})
x = np.array([[3., 1., 3., 2., 3.], [0., 5., -1., 5., 2.], [4., 4., 4., 4., 4.]], 'float32')
for n, k, axis, largest, srt in [("topk_ties", 3, -1, True, True), ("topk_ties_smallest", 2, 1, False, True),
                                 ("topk_ties_axis0", 2, 0, True, True), ("topk_ties_unsorted", 3, 1, True, False)]:
    xt = T(x); o, ind = _C_ops.topk(xt, k, axis, largest, srt); g = f(*o.shape); backward(o, g)
    case(n, {"x": x, "out_grad": g, "paddle_indices": ind.numpy()}, {"k": k, "axis": axis, "largest": largest, "sorted": srt},
         {"out": o, "indices": ind, "x_grad": xt.grad})
# nll_loss of a batch whose labels are all ignored: loss 0 and gradient 0, not NaN
inp = f(3, 4); lab = np.full(3, -100, 'int64'); g = np.array(0.6, 'float32')
it = T(inp); out, tw = _C_ops.nll_loss(it, T(lab, False), None, -100, "mean"); backward(out, g)
case("nll_loss_all_ignored", {"input": inp, "label": lab, "out_grad": g}, {"ignore_index": -100, "reduction": "mean"},
     {"out": out, "total_weight": tw, "input_grad": it.grad})
# scatter with negative indices (counted from the end)
x = f(4, 2); idx = np.array([-1, 0, -4], 'int64'); up = f(3, 2)
xt, ut = T(x), T(up); o = _C_ops.scatter(xt, T(idx, False), ut, True); g = f(*o.shape); backward(o, g)
case("scatter_negative", {"x": x, "index": idx, "updates": up, "out_grad": g}, {"overwrite": True},
     {"out": o, "x_grad": xt.grad, "updates_grad": ut.grad})

# fmax/fmin: ties (which operand takes the gradient) and a broadcast y
x = np.array([[1., 2., 3.], [0.5, -1., 4.]], 'float32'); y = np.array([1., 0., 3.5], 'float32')
for n, fn in [("fmax", paddle.fmax), ("fmin", paddle.fmin)]:
    g = f(2, 3); xt, yt = T(x), T(y); o = fn(xt, yt); backward(o, g)
    case(n, {"x": x, "y": y, "out_grad": g}, {}, {"out": o, "x_grad": xt.grad, "y_grad": yt.grad})

# bilinear: with and without a bias
x, y, w, b = f(4, 3), f(4, 5), f(2, 3, 5), f(1, 2)
for n, bias in [("bilinear", b), ("bilinear_no_bias", None)]:
    xt, yt, wt = T(x), T(y), T(w); bt = T(bias) if bias is not None else None
    o = F.bilinear(xt, yt, wt, bt); g = f(*o.shape); backward(o, g)
    ins = {"x": x, "y": y, "weight": w, "out_grad": g}
    outs = {"out": o, "x_grad": xt.grad, "y_grad": yt.grad, "weight_grad": wt.grad}
    if bias is not None:
        ins["bias"] = bias; outs["bias_grad"] = bt.grad
    case(n, ins, {}, outs)

# einsum: a matmul, a batched contraction with a summed label, an outer product, the implicit
# form, a diagonal (a repeated label) and one operand
for n, eq, shapes in [("einsum_matmul", "ij,jk->ik", [(2, 3), (3, 4)]),
                      ("einsum_batched_sum", "bij,bjk->bk", [(2, 3, 4), (2, 4, 5)]),
                      ("einsum_outer", "i,j->ij", [(3,), (4,)]),
                      ("einsum_implicit", "ij,jk", [(2, 3), (3, 4)]),
                      ("einsum_diagonal", "ii,ij->j", [(3, 3), (3, 2)]),
                      ("einsum_transpose_sum", "ijk->kj", [(2, 3, 4)])]:
    ops = [f(*s_) for s_ in shapes]; ts = [T(a) for a in ops]
    o = paddle.einsum(eq, *ts); g = f(*o.shape); backward(o, g)
    ins = {f"x{k}": a for k, a in enumerate(ops)}; ins["out_grad"] = g
    outs = {"out": o}; outs.update({f"x{k}_grad": t.grad for k, t in enumerate(ts)})
    case(n, ins, {"equation": eq}, outs)

# ---- optimizers: one step through Paddle's in-place ops, inputs copied first ----
n = 7
def step(name, inputs, attrs, run, out_names):
    t = {k: T(v.copy(), False) for k, v in inputs.items()}
    r = run(t)
    case(name, inputs, attrs, dict(zip(out_names, r)))
lr = np.array([0.01], 'float32')
step("adadelta", dict(param=f(n), grad=f(n), avg_squared_grad=np.abs(f(n)), avg_squared_update=0.1 * np.abs(f(n)),
                      learning_rate=np.array([1.0], 'float32')),
     {"rho": 0.95, "epsilon": 1e-6},
     lambda t: _C_ops.adadelta_(t["param"], t["grad"], t["avg_squared_grad"], t["avg_squared_update"],
                                t["learning_rate"], None, 0.95, 1e-6, False)[:3],
     ["param_out", "avg_squared_grad_out", "avg_squared_update_out"])
# nadam and radam: Paddle 3.3.1's CPU kernels combine their one-element state (nadam's mu_t and
# mu_product, radam's beta powers) with the parameter-sized terms without broadcasting, so past
# element 0 they read memory beyond that state (NaN or garbage: element 0 alone agrees with the
# formula). Each element is therefore stepped as a one-element parameter, where the kernels are
# right, and the results are put together.
def by_element(op, vector_names, attrs):
    def run(t):
        outs = []
        for k in range(n):
            e = {name: (v[k:k + 1] if name in vector_names else v).clone() for name, v in t.items()}
            outs.append(op(e, attrs)[:6])
        vec = lambda i: paddle.concat([o[i] for o in outs])
        return [vec(0), outs[0][1], outs[0][2], outs[0][3], vec(4), vec(5)]
    return run
nadam_op = lambda e, a: _C_ops.nadam_(e["param"], e["grad"], e["learning_rate"], e["momentum_decay_pow"], e["beta2_pow"],
                                      e["mu_product"], e["moment1"], e["moment2"], None, *a, False)
radam_op = lambda e, a: _C_ops.radam_(e["param"], e["grad"], e["learning_rate"], e["beta1_pow"], e["beta2_pow"], e["rho"],
                                      e["moment1"], e["moment2"], None, *a, False)
vectors = ("param", "grad", "moment1", "moment2")
nadam_by_element = by_element(nadam_op, vectors, (0.9, 0.999, 1e-8, 0.004))
for name, steps in [("nadam", 3), ("nadam_first_step", 0)]:
    step(name, dict(param=f(n), grad=f(n), learning_rate=lr, momentum_decay_pow=np.array([0.96 ** steps], 'float32'),
                    beta2_pow=np.array([0.999 ** steps], 'float32'), mu_product=np.array([0.8 if steps else 1.0], 'float32'),
                    moment1=0.1 * f(n) if steps else np.zeros(n, 'float32'), moment2=0.1 * np.abs(f(n)) if steps else np.zeros(n, 'float32')),
         {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8, "momentum_decay": 0.004}, nadam_by_element,
         ["param_out", "momentum_decay_pow_out", "beta2_pow_out", "mu_product_out", "moment1_out", "moment2_out"])
# radam: the first step (beta powers 1: rho_t <= 5, the unrectified update) and a late one
# (rectified)
for name, steps, rho in [("radam_first_step", 0, 0.0), ("radam_late", 20, 9.0)]:
    step(name, dict(param=f(n), grad=f(n), learning_rate=lr, beta1_pow=np.array([0.9 ** steps], 'float32'),
                    beta2_pow=np.array([0.999 ** steps], 'float32'), rho=np.array([rho], 'float32'),
                    moment1=0.1 * f(n), moment2=0.1 * np.abs(f(n))),
         {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8},
         by_element(radam_op, vectors, (0.9, 0.999, 1e-8)),
         ["param_out", "beta1_pow_out", "beta2_pow_out", "rho_out", "moment1_out", "moment2_out"])
# rprop: gradients agreeing, disagreeing and zero against prev; steps hitting both bounds
g = f(8); prev = f(8); prev[0] = 0.0; g[1] = 0.0
lrs = np.array([0.01, 0.02, 0.001, 0.04, 0.0015, 0.01, 0.03, 0.002], 'float32')
step("rprop", dict(param=f(8), grad=g, prev=prev, learning_rate=lrs, learning_rate_range=np.array([0.001, 0.035], 'float32'),
                   etas=np.array([0.5, 1.2], 'float32')), {},
     lambda t: _C_ops.rprop_(t["param"], t["grad"], t["prev"], t["learning_rate"], None, t["learning_rate_range"],
                             t["etas"], False)[:3],
     ["param_out", "prev_out", "learning_rate_out"])
step("asgd", dict(param=f(n), grad=f(n), learning_rate=lr, d=f(n), y=f(n), n=np.array([3.0], 'float32')), {},
     lambda t: _C_ops.asgd_(t["param"], t["grad"], t["learning_rate"], t["d"], t["y"], t["n"], None, False)[:3],
     ["param_out", "d_out", "y_out"])

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'paddle_loss_index_kernels.json')
json.dump({"paddle": paddle.__version__, "cases": cases}, open(out, 'w'), indent=None)
print(len(cases), "cases", paddle.__version__)
