//! `rnn` and `rnn_grad`: Paddle's fused multi-layer recurrent op (LSTM, GRU, RNN_TANH,
//! RNN_RELU), forward and backward through time.
//!
//! Semantics (Paddle's CPU `rnn` kernel, as `paddle.nn.LSTM`/`GRU`/`SimpleRNN` use it):
//! - `x` is time-major `[T, B, I]`; `out` is `[T, B, D·H]` with `D = 2` when `is_bidirec`
//!   (forward direction first in the last dimension); layer `l > 0` reads layer `l − 1`'s `out`.
//! - `weight_list` has `4·L·D` tensors: first every `(w_ih [G·H, I_l], w_hh [G·H, H])` pair in
//!   `(layer, direction)` order, then every `(b_ih, b_hh)` pair in the same order (the cuDNN-like
//!   order `RNNBase.flatten_parameters` makes). `G` is 4 (LSTM), 3 (GRU) or 1.
//! - `pre_state` is `[h0]` (`[h0, c0]` for LSTM), each `[L·D, B, H]` with row `l·D + d`; `state`
//!   holds the final states in the same layout.
//! - Gates, from `g = x·w_ihᵀ + b_ih + h·w_hhᵀ + b_hh` split in `G` blocks of `H`:
//!   LSTM `i, f, c̃, o` (`c = f·c' + i·tanh(c̃)`, `h = σ(o)·tanh(c)`, σ on i, f, o);
//!   GRU `r, z, n` with `r = σ(·)`, `z = σ(·)`, `n = tanh(x_n + b_in + r·(h'·w_hnᵀ + b_hn))`,
//!   `h = z·h' + (1 − z)·n`; RNN `h = tanh(g)` or `relu(g)`.
//! - `sequence_length` (`[B]`, optional): at steps `t ≥ len[b]` row `b`'s output is 0 and its
//!   state is carried unchanged; the reverse direction therefore starts from `h0` at step
//!   `len[b] − 1`.
//!   Measured: Paddle 3.3.1's CPU `rnn_grad` then gets the reverse direction's `w_hh` gradient
//!   wrong when rows have different lengths (it disagrees with central differences of Paddle's
//!   own forward; every other gradient agrees). This kernel computes the derivative of the
//!   forward, so there it differs from Paddle's backward (`paddle_rnn_kernels.json` records both).
//! - `dropout_prob` applies between layers in training. A random mask is refused (as
//!   [`super::dropout`] does): two programs' runs could not be compared.
//!
//! The reserve (`reserve`, which `rnn_grad` reads) is this kernel's own layout, not Paddle's:
//! for each layer its input when `l > 0` (`[T, B, D·H]`), then for each direction one record per
//! step and row — the gate activations, GRU's hidden-side candidate `h'·w_hnᵀ + b_hn`, LSTM's
//! cell, and the state after the step ([`Layout`]). `rnn_grad` refuses a reserve of another size.
//!
//! Hot loops: the input projection of a whole layer is one GEMM (`[T·B, I] · [I, G·H]`), each
//! step's recurrence one GEMM (`[B, H] · [H, G·H]`); the backward's weight gradients are one
//! GEMM each per layer and direction, over all steps at once. Computed in f32 (16-bit floats
//! widened, each output rounded once) or f64.

use gemm::Parallelism;

use crate::exec::dtype::DType;
use crate::exec::error::{KResult, KernelError};
use crate::exec::kernels::matmul::{gemm_acc_into, gemm_into, GemmScalar, MatRef};
use crate::exec::memory;
use crate::exec::tensor::{Data, Tensor};
use crate::kbail;

/// The cell (`mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Lstm,
    Gru,
    RnnTanh,
    RnnRelu,
}

impl Mode {
    pub fn parse(s: &str) -> KResult<Mode> {
        Ok(match s {
            "LSTM" => Mode::Lstm,
            "GRU" => Mode::Gru,
            "RNN_TANH" => Mode::RnnTanh,
            "RNN_RELU" => Mode::RnnRelu,
            other => kbail!(
                "rnn mode `{}` is not LSTM, GRU, RNN_TANH or RNN_RELU",
                other
            ),
        })
    }

    /// Gate blocks of `H` in a projection.
    fn gates(self) -> usize {
        match self {
            Mode::Lstm => 4,
            Mode::Gru => 3,
            Mode::RnnTanh | Mode::RnnRelu => 1,
        }
    }

    /// Tensors in `pre_state` and `state`.
    pub fn states(self) -> usize {
        if self == Mode::Lstm {
            2
        } else {
            1
        }
    }

    /// Values recorded per step and row, in units of `H`: the gates, then GRU's hidden-side
    /// candidate or LSTM's cell, then the state after the step.
    fn record(self) -> usize {
        match self {
            Mode::Lstm => 6,
            Mode::Gru => 5,
            Mode::RnnTanh | Mode::RnnRelu => 2,
        }
    }
}

/// The op's attributes.
#[derive(Clone, Debug)]
pub struct RnnAttrs {
    pub mode: Mode,
    pub input_size: i64,
    pub hidden_size: i64,
    pub num_layers: i64,
    pub is_bidirec: bool,
    pub dropout_prob: f32,
    pub is_test: bool,
}

/// Sizes of one call, checked against the operands.
#[derive(Clone, Copy, Debug)]
struct Dims {
    mode: Mode,
    t: usize,
    b: usize,
    i: usize,
    h: usize,
    l: usize,
    d: usize,
}

impl Dims {
    fn gh(&self) -> usize {
        self.mode.gates() * self.h
    }

    /// Input width of layer `l`.
    fn input_of(&self, l: usize) -> usize {
        if l == 0 {
            self.i
        } else {
            self.d * self.h
        }
    }
}

/// Where things are in the reserve.
struct Layout {
    /// Start of each layer's block.
    layer: Vec<usize>,
    len: usize,
}

impl Layout {
    fn of(dm: &Dims) -> Option<Layout> {
        let (tb, h) = (dm.t.checked_mul(dm.b)?, dm.h);
        let per_dir = tb.checked_mul(dm.mode.record())?.checked_mul(h)?;
        let mut layer = Vec::with_capacity(dm.l);
        let mut len = 0usize;
        for l in 0..dm.l {
            layer.push(len);
            if l > 0 {
                len = len.checked_add(tb.checked_mul(dm.d * h)?)?;
            }
            len = len.checked_add(per_dir.checked_mul(dm.d)?)?;
        }
        Some(Layout { layer, len })
    }

    /// Layer `l`'s input (`l > 0`): `[T, B, D·H]`.
    fn input(&self, dm: &Dims, l: usize) -> std::ops::Range<usize> {
        let s = self.layer[l];
        s..s + dm.t * dm.b * dm.d * dm.h
    }

    /// Records of layer `l`, direction `d`: `[T, B, record·H]` in time order.
    fn records(&self, dm: &Dims, l: usize, d: usize) -> std::ops::Range<usize> {
        let inp = if l > 0 { dm.t * dm.b * dm.d * dm.h } else { 0 };
        let per_dir = dm.t * dm.b * dm.mode.record() * dm.h;
        let s = self.layer[l] + inp + d * per_dir;
        s..s + per_dir
    }
}

/// The float type a call computes in.
pub trait Real:
    GemmScalar
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::AddAssign
{
    const ZERO: Self;
    fn sigmoid(self) -> Self;
    fn tanh(self) -> Self;
    /// A tensor's values in this type.
    fn values(t: &Tensor) -> Vec<Self>;
    fn data(v: Vec<Self>) -> Data;
}

impl Real for f32 {
    const ZERO: f32 = 0.0;
    fn sigmoid(self) -> f32 {
        1.0 / (1.0 + (-self).exp())
    }
    fn tanh(self) -> f32 {
        f32::tanh(self)
    }
    fn values(t: &Tensor) -> Vec<f32> {
        t.to_f32().into_owned()
    }
    fn data(v: Vec<f32>) -> Data {
        Data::F32(v)
    }
}

impl Real for f64 {
    const ZERO: f64 = 0.0;
    fn sigmoid(self) -> f64 {
        1.0 / (1.0 + (-self).exp())
    }
    fn tanh(self) -> f64 {
        f64::tanh(self)
    }
    fn values(t: &Tensor) -> Vec<f64> {
        t.to_f64_vec()
    }
    fn data(v: Vec<f64>) -> Data {
        Data::F64(v)
    }
}

/// Row-major `rows × cols` matrix at `off` of `data`.
fn mat<T>(data: &[T], off: usize, rows: usize, cols: usize) -> MatRef<'_, T> {
    MatRef {
        data,
        off,
        rows,
        cols,
        rs: cols,
        cs: 1,
    }
}

/// The transpose of the row-major `rows × cols` matrix at `off`.
fn mat_t<T>(data: &[T], off: usize, rows: usize, cols: usize) -> MatRef<'_, T> {
    MatRef {
        data,
        off,
        rows: cols,
        cols: rows,
        rs: 1,
        cs: cols,
    }
}

const PAR: Parallelism = Parallelism::None;

/// The operands, checked and converted.
struct Operands<T> {
    dm: Dims,
    x: Vec<T>,
    /// `h0`, then `c0` for LSTM.
    states: Vec<Vec<T>>,
    /// `w_ih, w_hh, b_ih, b_hh` per `(layer, direction)`.
    weights: Vec<[Vec<T>; 4]>,
    /// Valid steps per row (all `T` without `sequence_length`).
    lens: Vec<usize>,
}

fn values<T: Real>(t: &Tensor) -> Vec<T> {
    T::values(t)
}

fn operands<T: Real>(
    x: &Tensor,
    pre_state: &[&Tensor],
    weight_list: &[&Tensor],
    sequence_length: Option<&Tensor>,
    at: &RnnAttrs,
) -> KResult<Operands<T>> {
    if !x.dtype().is_float() {
        kbail!(
            "rnn computes float tensors; x is {}",
            x.dtype().short_name()
        );
    }
    let [t, b, i] = match x.shape() {
        &[t, b, i] => [t, b, i],
        s => kbail!("rnn's x must be [time, batch, input], has shape {:?}", s),
    };
    let pos = |v: i64, what: &str| -> KResult<usize> {
        match usize::try_from(v) {
            Ok(u) if u > 0 => Ok(u),
            _ => kbail!("rnn's {} is {}, must be positive", what, v),
        }
    };
    let h = pos(at.hidden_size, "hidden_size")?;
    let l = pos(at.num_layers, "num_layers")?;
    if at.input_size != i as i64 {
        kbail!(
            "rnn's input_size is {} but x has {} features (shape {:?})",
            at.input_size,
            i,
            x.shape()
        );
    }
    let d = if at.is_bidirec { 2 } else { 1 };
    let dm = Dims {
        mode: at.mode,
        t,
        b,
        i,
        h,
        l,
        d,
    };
    if !(0.0..=1.0).contains(&at.dropout_prob) {
        kbail!("rnn's dropout_prob {} is not in [0, 1]", at.dropout_prob);
    }
    if !at.is_test && at.dropout_prob > 0.0 && l > 1 {
        return Err(KernelError::new(format!(
            "rnn with dropout_prob = {} in training draws a random mask between its layers: two runs (the original and the rewritten program) would drop different elements, so irw does not execute it",
            at.dropout_prob
        ))
        .with_hint("check the program with dropout 0 (or is_test: true); a rewrite that leaves the forward alone is exercised all the same"));
    }
    let ns = at.mode.states();
    if pre_state.len() != ns {
        kbail!(
            "rnn {:?} takes {} initial state tensor(s), pre_state has {}",
            at.mode,
            ns,
            pre_state.len()
        );
    }
    let mut states = Vec::with_capacity(ns);
    for (k, s) in pre_state.iter().enumerate() {
        if s.shape() != [l * d, b, h] {
            kbail!(
                "rnn's pre_state[{}] has shape {:?}, expected [{}, {}, {}] (layers·directions, batch, hidden)",
                k,
                s.shape(),
                l * d,
                b,
                h
            );
        }
        states.push(values(s));
    }
    let n = l * d;
    if weight_list.len() != 4 * n {
        kbail!(
            "rnn's weight_list has {} tensors; {} layer(s) × {} direction(s) need {} (w_ih, w_hh per layer and direction, then b_ih, b_hh)",
            weight_list.len(),
            l,
            d,
            4 * n
        );
    }
    let gh = dm.gh();
    let mut weights = Vec::with_capacity(n);
    for ld in 0..n {
        let want: [(usize, Vec<usize>); 4] = [
            (2 * ld, vec![gh, dm.input_of(ld / d)]),
            (2 * ld + 1, vec![gh, h]),
            (2 * n + 2 * ld, vec![gh]),
            (2 * n + 2 * ld + 1, vec![gh]),
        ];
        let mut four: [Vec<T>; 4] = Default::default();
        for (slot, (idx, shape)) in four.iter_mut().zip(want) {
            let w = weight_list[idx];
            if w.shape() != shape.as_slice() {
                kbail!(
                    "rnn's weight_list[{}] has shape {:?}, expected {:?} (layer {}, direction {})",
                    idx,
                    w.shape(),
                    shape,
                    ld / d,
                    ld % d
                );
            }
            *slot = values(w);
        }
        weights.push(four);
    }
    let lens = match sequence_length {
        None => vec![t; b],
        Some(s) => {
            if s.shape() != [b] {
                kbail!(
                    "rnn's sequence_length has shape {:?}, expected [{}] (one length per row)",
                    s.shape(),
                    b
                );
            }
            let v = s.to_i64_vec();
            let mut lens = Vec::with_capacity(b);
            for (row, &n) in v.iter().enumerate() {
                match usize::try_from(n) {
                    Ok(n) if n <= t => lens.push(n),
                    _ => kbail!("rnn's sequence_length[{}] is {}, not in [0, {}]", row, n, t),
                }
            }
            lens
        }
    };
    Ok(Operands {
        dm,
        x: values(x),
        states,
        weights,
        lens,
    })
}

/// Steps of direction `d` in the order it runs.
fn steps(t: usize, d: usize) -> Box<dyn Iterator<Item = usize>> {
    if d == 0 {
        Box::new(0..t)
    } else {
        Box::new((0..t).rev())
    }
}

fn reserve_memory(dm: &Dims, what: &str, extra: usize) -> KResult<Layout> {
    let layout = Layout::of(dm).ok_or_else(|| {
        KernelError::new(format!(
            "rnn's {what} has more elements than a machine can address"
        ))
    })?;
    memory::reserve(&format_args!("rnn's {what}"), &[layout.len + extra], 8)?;
    Ok(layout)
}

/// The forward's values: `out`, the final states, the reserve.
struct Forward<T> {
    out: Vec<T>,
    states: Vec<Vec<T>>,
    reserve: Vec<T>,
}

/// The backward's values, in the operands' layouts.
struct Backward<T> {
    x: Vec<T>,
    states: Vec<Vec<T>>,
    weights: Vec<[Vec<T>; 4]>,
}

/// The forward.
fn forward<T: Real>(op: &Operands<T>) -> KResult<Forward<T>> {
    let dm = op.dm;
    let (t, b, h, gh) = (dm.t, dm.b, dm.h, dm.gh());
    let rec = dm.mode.record() * h;
    let layout = reserve_memory(&dm, "forward", t * b * gh)?;
    let mut reserve = vec![T::ZERO; layout.len];
    let mut finals: Vec<Vec<T>> = (0..dm.mode.states())
        .map(|_| vec![T::ZERO; dm.l * dm.d * b * h])
        .collect();
    let mut layer_in: Vec<T> = op.x.clone();
    let mut xw = vec![T::ZERO; t * b * gh];
    let mut hw = vec![T::ZERO; b * gh];
    for l in 0..dm.l {
        let il = dm.input_of(l);
        if l > 0 {
            reserve[layout.input(&dm, l)].copy_from_slice(&layer_in);
        }
        let mut out = vec![T::ZERO; t * b * dm.d * h];
        for d in 0..dm.d {
            let ld = l * dm.d + d;
            let [w_ih, w_hh, b_ih, b_hh] = &op.weights[ld];
            gemm_into(
                &mut xw,
                mat(&layer_in, 0, t * b, il),
                mat_t(w_ih, 0, gh, il),
                PAR,
            );
            let mut hp: Vec<T> = op.states[0][ld * b * h..(ld + 1) * b * h].to_vec();
            let mut cp: Vec<T> = match dm.mode {
                Mode::Lstm => op.states[1][ld * b * h..(ld + 1) * b * h].to_vec(),
                _ => Vec::new(),
            };
            let recs = layout.records(&dm, l, d);
            for s in steps(t, d) {
                gemm_into(&mut hw, mat(&hp, 0, b, h), mat_t(w_hh, 0, gh, h), PAR);
                for row in 0..b {
                    let live = s < op.lens[row];
                    let gx = &xw[(s * b + row) * gh..(s * b + row + 1) * gh];
                    let gr = &hw[row * gh..(row + 1) * gh];
                    let r0 = recs.start + (s * b + row) * rec;
                    let r = &mut reserve[r0..r0 + rec];
                    let hrow = &mut hp[row * h..(row + 1) * h];
                    let o0 = (s * b + row) * dm.d * h + d * h;
                    let orow = &mut out[o0..o0 + h];
                    cell(dm.mode, h, gx, gr, b_ih, b_hh, hrow, &mut cp, row, r, live);
                    if live {
                        orow.copy_from_slice(hrow);
                    }
                }
            }
            finals[0][ld * b * h..(ld + 1) * b * h].copy_from_slice(&hp);
            if dm.mode == Mode::Lstm {
                finals[1][ld * b * h..(ld + 1) * b * h].copy_from_slice(&cp);
            }
        }
        layer_in = out;
    }
    Ok(Forward {
        out: layer_in,
        states: finals,
        reserve,
    })
}

/// One step of one row: updates the state `hrow` (and LSTM's cell row `row` of `cp`) unless the
/// row is past its length, and writes the step's record `r`.
#[allow(clippy::too_many_arguments)]
fn cell<T: Real>(
    mode: Mode,
    h: usize,
    gx: &[T],
    gr: &[T],
    b_ih: &[T],
    b_hh: &[T],
    hrow: &mut [T],
    cp: &mut [T],
    row: usize,
    r: &mut [T],
    live: bool,
) {
    let one = T::ONE;
    if live {
        match mode {
            Mode::Lstm => {
                let crow = &mut cp[row * h..(row + 1) * h];
                for j in 0..h {
                    let g = |k: usize| {
                        gx[k * h + j] + b_ih[k * h + j] + gr[k * h + j] + b_hh[k * h + j]
                    };
                    let (i, f, c, o) =
                        (g(0).sigmoid(), g(1).sigmoid(), g(2).tanh(), g(3).sigmoid());
                    let cn = f * crow[j] + i * c;
                    crow[j] = cn;
                    hrow[j] = o * cn.tanh();
                    r[j] = i;
                    r[h + j] = f;
                    r[2 * h + j] = c;
                    r[3 * h + j] = o;
                }
                r[4 * h..5 * h].copy_from_slice(crow);
            }
            Mode::Gru => {
                for j in 0..h {
                    let rg = (gx[j] + b_ih[j] + gr[j] + b_hh[j]).sigmoid();
                    let z = (gx[h + j] + b_ih[h + j] + gr[h + j] + b_hh[h + j]).sigmoid();
                    let hn = gr[2 * h + j] + b_hh[2 * h + j];
                    let n = (gx[2 * h + j] + b_ih[2 * h + j] + rg * hn).tanh();
                    hrow[j] = z * hrow[j] + (one - z) * n;
                    r[j] = rg;
                    r[h + j] = z;
                    r[2 * h + j] = n;
                    r[3 * h + j] = hn;
                }
            }
            Mode::RnnTanh | Mode::RnnRelu => {
                for j in 0..h {
                    let g = gx[j] + b_ih[j] + gr[j] + b_hh[j];
                    let v = if mode == Mode::RnnTanh {
                        g.tanh()
                    } else if g > T::ZERO {
                        g
                    } else {
                        T::ZERO
                    };
                    hrow[j] = v;
                    r[j] = v;
                }
            }
        }
    } else if mode == Mode::Lstm {
        r[4 * h..5 * h].copy_from_slice(&cp[row * h..(row + 1) * h]);
    }
    let last = r.len() - h;
    r[last..].copy_from_slice(hrow);
}

/// The gradients of `x`, of `pre_state` and of the weights.
fn backward<T: Real>(
    op: &Operands<T>,
    reserve: &[T],
    out_grad: Option<Vec<T>>,
    state_grad: &[Option<Vec<T>>],
) -> KResult<Backward<T>> {
    let dm = op.dm;
    let (t, b, h, gh) = (dm.t, dm.b, dm.h, dm.gh());
    let rec = dm.mode.record() * h;
    let layout = reserve_memory(&dm, "backward", 3 * t * b * gh)?;
    if reserve.len() != layout.len {
        kbail!(
            "rnn_grad's reserve has {} elements; the rnn of these operands writes {} (is it this op's forward?)",
            reserve.len(),
            layout.len
        );
    }
    let one = T::ONE;
    let mut d_states: Vec<Vec<T>> = (0..dm.mode.states())
        .map(|_| vec![T::ZERO; dm.l * dm.d * b * h])
        .collect();
    let mut d_weights: Vec<[Vec<T>; 4]> = Vec::with_capacity(dm.l * dm.d);
    for ld in 0..dm.l * dm.d {
        let il = dm.input_of(ld / dm.d);
        d_weights.push([
            vec![T::ZERO; gh * il],
            vec![T::ZERO; gh * h],
            vec![T::ZERO; gh],
            vec![T::ZERO; gh],
        ]);
    }
    // The gradient reaching the top layer's output, then each lower layer's.
    let mut d_out = out_grad.unwrap_or_else(|| vec![T::ZERO; t * b * dm.d * h]);
    let mut dxw = vec![T::ZERO; t * b * gh];
    let mut dhw = vec![T::ZERO; t * b * gh];
    let mut h_prev_all = vec![T::ZERO; t * b * h];
    let mut dh_rec = vec![T::ZERO; b * h];
    for l in (0..dm.l).rev() {
        let il = dm.input_of(l);
        let layer_in: &[T] = if l == 0 {
            &op.x
        } else {
            &reserve[layout.input(&dm, l)]
        };
        let mut d_in = vec![T::ZERO; t * b * il];
        for d in 0..dm.d {
            let ld = l * dm.d + d;
            let [w_ih, w_hh, _, _] = &op.weights[ld];
            let recs = &reserve[layout.records(&dm, l, d)];
            let h0 = &op.states[0][ld * b * h..(ld + 1) * b * h];
            let c0: &[T] = match dm.mode {
                Mode::Lstm => &op.states[1][ld * b * h..(ld + 1) * b * h],
                _ => &[],
            };
            let mut dh = match state_grad.first().and_then(|g| g.as_ref()) {
                Some(g) => g[ld * b * h..(ld + 1) * b * h].to_vec(),
                None => vec![T::ZERO; b * h],
            };
            let mut dc = match state_grad.get(1).and_then(|g| g.as_ref()) {
                Some(g) if dm.mode == Mode::Lstm => g[ld * b * h..(ld + 1) * b * h].to_vec(),
                _ => vec![T::ZERO; if dm.mode == Mode::Lstm { b * h } else { 0 }],
            };
            let order: Vec<usize> = steps(t, d).collect();
            for (k, &s) in order.iter().enumerate().rev() {
                // The step before this one in the direction's order.
                let prev = if k == 0 { None } else { Some(order[k - 1]) };
                for row in 0..b {
                    let hp: &[T] = match prev {
                        None => &h0[row * h..(row + 1) * h],
                        Some(p) => {
                            let r0 = (p * b + row) * rec;
                            &recs[r0 + rec - h..r0 + rec]
                        }
                    };
                    h_prev_all[(s * b + row) * h..(s * b + row + 1) * h].copy_from_slice(hp);
                    let gx = &mut dxw[(s * b + row) * gh..(s * b + row + 1) * gh];
                    let gr = &mut dhw[(s * b + row) * gh..(s * b + row + 1) * gh];
                    let dhr = &mut dh[row * h..(row + 1) * h];
                    if s >= op.lens[row] {
                        // Past the row's length: the state passes through untouched.
                        gx.iter_mut().for_each(|v| *v = T::ZERO);
                        gr.iter_mut().for_each(|v| *v = T::ZERO);
                        continue;
                    }
                    let o0 = (s * b + row) * dm.d * h + d * h;
                    for (v, &g) in dhr.iter_mut().zip(&d_out[o0..o0 + h]) {
                        *v += g;
                    }
                    let r = &recs[(s * b + row) * rec..(s * b + row + 1) * rec];
                    match dm.mode {
                        Mode::Lstm => {
                            let cp: &[T] = match prev {
                                None => &c0[row * h..(row + 1) * h],
                                Some(p) => {
                                    let r0 = (p * b + row) * rec + 4 * h;
                                    &recs[r0..r0 + h]
                                }
                            };
                            let dcr = &mut dc[row * h..(row + 1) * h];
                            for j in 0..h {
                                let (i, f, c, o, cn) =
                                    (r[j], r[h + j], r[2 * h + j], r[3 * h + j], r[4 * h + j]);
                                let tc = cn.tanh();
                                let dcn = dcr[j] + dhr[j] * o * (one - tc * tc);
                                let (di, df, dg, dout) =
                                    (dcn * c, dcn * cp[j], dcn * i, dhr[j] * tc);
                                gx[j] = di * i * (one - i);
                                gx[h + j] = df * f * (one - f);
                                gx[2 * h + j] = dg * (one - c * c);
                                gx[3 * h + j] = dout * o * (one - o);
                                dcr[j] = dcn * f;
                            }
                            gr.copy_from_slice(gx);
                            dhr.iter_mut().for_each(|v| *v = T::ZERO);
                        }
                        Mode::Gru => {
                            for j in 0..h {
                                let (rg, z, n, hn) = (r[j], r[h + j], r[2 * h + j], r[3 * h + j]);
                                let g = dhr[j];
                                let dn = g * (one - z) * (one - n * n);
                                let dz = g * (hp[j] - n) * z * (one - z);
                                let dr = dn * hn * rg * (one - rg);
                                gx[j] = dr;
                                gx[h + j] = dz;
                                gx[2 * h + j] = dn;
                                gr[j] = dr;
                                gr[h + j] = dz;
                                gr[2 * h + j] = dn * rg;
                                dhr[j] = g * z;
                            }
                        }
                        Mode::RnnTanh | Mode::RnnRelu => {
                            for j in 0..h {
                                let v = r[j];
                                let dv = if dm.mode == Mode::RnnTanh {
                                    one - v * v
                                } else if v > T::ZERO {
                                    one
                                } else {
                                    T::ZERO
                                };
                                gx[j] = dhr[j] * dv;
                            }
                            gr.copy_from_slice(gx);
                            dhr.iter_mut().for_each(|v| *v = T::ZERO);
                        }
                    }
                }
                // dh_prev += dhw[s] · w_hh: the recurrence's share.
                gemm_into(
                    &mut dh_rec,
                    mat(&dhw, s * b * gh, b, gh),
                    mat(w_hh, 0, gh, h),
                    PAR,
                );
                for (v, &g) in dh.iter_mut().zip(&dh_rec) {
                    *v += g;
                }
            }
            d_states[0][ld * b * h..(ld + 1) * b * h].copy_from_slice(&dh);
            if dm.mode == Mode::Lstm {
                d_states[1][ld * b * h..(ld + 1) * b * h].copy_from_slice(&dc);
            }
            let [dw_ih, dw_hh, db_ih, db_hh] = &mut d_weights[ld];
            gemm_into(
                dw_ih,
                mat_t(&dxw, 0, t * b, gh),
                mat(layer_in, 0, t * b, il),
                PAR,
            );
            gemm_into(
                dw_hh,
                mat_t(&dhw, 0, t * b, gh),
                mat(&h_prev_all, 0, t * b, h),
                PAR,
            );
            for (rows, db) in [(&dxw, db_ih), (&dhw, db_hh)] {
                for r in rows.chunks_exact(gh) {
                    for (acc, &v) in db.iter_mut().zip(r) {
                        *acc += v;
                    }
                }
            }
            gemm_acc_into(
                &mut d_in,
                mat(&dxw, 0, t * b, gh),
                mat(w_ih, 0, gh, il),
                PAR,
            );
        }
        d_out = d_in;
    }
    Ok(Backward {
        x: d_out,
        states: d_states,
        weights: d_weights,
    })
}

fn tensor_of<T: Real>(shape: Vec<usize>, v: Vec<T>, like: DType) -> KResult<Tensor> {
    let t = Tensor::new(shape, T::data(v))?;
    Ok(if t.dtype() == like {
        t
    } else {
        crate::exec::kernels::cast::cast(&t, like)
    })
}

/// What `rnn` returns: `out`, `state` and the reserve.
pub struct RnnOut {
    pub out: Tensor,
    pub state: Vec<Tensor>,
    pub reserve: Tensor,
}

/// `rnn(x, pre_state, weight_list, sequence_length?)`.
pub fn rnn(
    x: &Tensor,
    pre_state: &[&Tensor],
    weight_list: &[&Tensor],
    sequence_length: Option<&Tensor>,
    at: &RnnAttrs,
) -> KResult<RnnOut> {
    if x.dtype() == DType::F64 {
        rnn_in::<f64>(x, pre_state, weight_list, sequence_length, at)
    } else {
        rnn_in::<f32>(x, pre_state, weight_list, sequence_length, at)
    }
}

fn rnn_in<T: Real>(
    x: &Tensor,
    pre_state: &[&Tensor],
    weight_list: &[&Tensor],
    sequence_length: Option<&Tensor>,
    at: &RnnAttrs,
) -> KResult<RnnOut> {
    let op = operands::<T>(x, pre_state, weight_list, sequence_length, at)?;
    let dm = op.dm;
    let Forward {
        out,
        states,
        reserve,
    } = forward(&op)?;
    let like = x.dtype();
    let n = reserve.len();
    Ok(RnnOut {
        out: tensor_of(vec![dm.t, dm.b, dm.d * dm.h], out, like)?,
        state: states
            .into_iter()
            .map(|s| tensor_of(vec![dm.l * dm.d, dm.b, dm.h], s, like))
            .collect::<KResult<_>>()?,
        // In the compute type: a 16-bit reserve would round the activations the backward reads.
        reserve: Tensor::new(vec![n], T::data(reserve))?,
    })
}

/// What `rnn_grad` returns: `x_grad`, `pre_state_grad`, `weight_list_grad`.
pub struct RnnGrad {
    pub x_grad: Tensor,
    pub pre_state_grad: Vec<Tensor>,
    pub weight_list_grad: Vec<Tensor>,
}

/// `rnn_grad(x, pre_state, weight_list, sequence_length?, reserve, out_grad?, state_grad)`;
/// an absent `out_grad` or `state_grad` entry counts as zeros.
#[allow(clippy::too_many_arguments)]
pub fn rnn_grad(
    x: &Tensor,
    pre_state: &[&Tensor],
    weight_list: &[&Tensor],
    sequence_length: Option<&Tensor>,
    reserve: &Tensor,
    out_grad: Option<&Tensor>,
    state_grad: &[Option<&Tensor>],
    at: &RnnAttrs,
) -> KResult<RnnGrad> {
    if x.dtype() == DType::F64 {
        rnn_grad_in::<f64>(
            x,
            pre_state,
            weight_list,
            sequence_length,
            reserve,
            out_grad,
            state_grad,
            at,
        )
    } else {
        rnn_grad_in::<f32>(
            x,
            pre_state,
            weight_list,
            sequence_length,
            reserve,
            out_grad,
            state_grad,
            at,
        )
    }
}

#[allow(clippy::too_many_arguments)]
fn rnn_grad_in<T: Real>(
    x: &Tensor,
    pre_state: &[&Tensor],
    weight_list: &[&Tensor],
    sequence_length: Option<&Tensor>,
    reserve: &Tensor,
    out_grad: Option<&Tensor>,
    state_grad: &[Option<&Tensor>],
    at: &RnnAttrs,
) -> KResult<RnnGrad> {
    let op = operands::<T>(x, pre_state, weight_list, sequence_length, at)?;
    let dm = op.dm;
    let out_shape = [dm.t, dm.b, dm.d * dm.h];
    let og = match out_grad {
        Some(g) if g.shape() != out_shape => kbail!(
            "rnn_grad's out_grad has shape {:?}, the output is {:?}",
            g.shape(),
            out_shape
        ),
        Some(g) => Some(values::<T>(g)),
        None => None,
    };
    if state_grad.len() > dm.mode.states() {
        kbail!(
            "rnn_grad's state_grad has {} tensors, the op has {} state(s)",
            state_grad.len(),
            dm.mode.states()
        );
    }
    let state_shape = [dm.l * dm.d, dm.b, dm.h];
    let mut sg = Vec::with_capacity(state_grad.len());
    for (k, g) in state_grad.iter().enumerate() {
        sg.push(match g {
            Some(g) if g.shape() != state_shape => kbail!(
                "rnn_grad's state_grad[{}] has shape {:?}, the state is {:?}",
                k,
                g.shape(),
                state_shape
            ),
            Some(g) => Some(values::<T>(g)),
            None => None,
        });
    }
    let Backward {
        x: dx,
        states: ds,
        weights: dw,
    } = backward(&op, &values::<T>(reserve), og, &sg)?;
    let like = x.dtype();
    let n = dm.l * dm.d;
    let mut weight_list_grad: Vec<Option<Tensor>> = (0..4 * n).map(|_| None).collect();
    for (ld, [w_ih, w_hh, b_ih, b_hh]) in dw.into_iter().enumerate() {
        for (idx, v) in [
            (2 * ld, w_ih),
            (2 * ld + 1, w_hh),
            (2 * n + 2 * ld, b_ih),
            (2 * n + 2 * ld + 1, b_hh),
        ] {
            let w = weight_list[idx];
            weight_list_grad[idx] = Some(tensor_of(w.shape().to_vec(), v, w.dtype())?);
        }
    }
    Ok(RnnGrad {
        x_grad: tensor_of(x.shape().to_vec(), dx, like)?,
        pre_state_grad: ds
            .into_iter()
            .zip(pre_state)
            .map(|(s, p)| tensor_of(p.shape().to_vec(), s, p.dtype()))
            .collect::<KResult<_>>()?,
        weight_list_grad: weight_list_grad.into_iter().flatten().collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::feed::tensor_from_json;
    use serde_json::Value;

    fn close(what: &str, got: &Tensor, want: &Tensor) {
        assert_eq!(got.shape(), want.shape(), "{what}: shape");
        let (g, w) = (got.to_f64_vec(), want.to_f64_vec());
        let max = w.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (i, (a, b)) in g.iter().zip(&w).enumerate() {
            assert!(
                (a - b).abs() <= 1e-5 * b.abs() + 1e-5 * max,
                "{what}[{i}]: irw {a}, Paddle {b}"
            );
        }
    }

    fn attrs(mode: Mode, i: i64, h: i64, l: i64, bidirec: bool) -> RnnAttrs {
        RnnAttrs {
            mode,
            input_size: i,
            hidden_size: h,
            num_layers: l,
            is_bidirec: bidirec,
            dropout_prob: 0.0,
            is_test: false,
        }
    }

    /// The `rnn` op of Paddle 3.3.1 alone on the cells the programs of
    /// `tests/exec_fixtures/rnn/` do not use (`paddle_rnn_kernels.json`, recorded by
    /// `tests/interop/rnn_fixtures.py`, f64): 2 bidirectional layers, sequence lengths 4 and 2.
    /// The weights' gradients are also compared with central differences of Paddle's forward.
    #[test]
    fn simple_rnn_tanh_and_relu_match_paddle() {
        static DATA: &str =
            include_str!("../../../tests/exec_fixtures/rnn/paddle_rnn_kernels.json");
        let v: Value = serde_json::from_str(DATA).expect("JSON");
        let cases = v["cases"].as_array().expect("cases");
        assert_eq!(cases.len(), 2);
        for c in cases {
            let t = |k: &str| tensor_from_json(&c[k]).expect("tensor");
            let ts = |k: &str| -> Vec<Tensor> {
                c[k].as_array()
                    .expect("list")
                    .iter()
                    .map(|w| tensor_from_json(w).expect("tensor"))
                    .collect()
            };
            let mode = Mode::parse(c["mode"].as_str().expect("mode")).expect("mode");
            let at = attrs(mode, 3, 4, 2, true);
            let (x, h0, lens) = (t("x"), t("h0"), t("sequence_length"));
            let w = ts("weight_list");
            let wr: Vec<&Tensor> = w.iter().collect();
            let o = rnn(&x, &[&h0], &wr, Some(&lens), &at).expect("rnn runs");
            close("out", &o.out, &t("out"));
            close("state", &o.state[0], &t("state"));
            let (og, sg) = (t("out_grad"), t("state_grad"));
            let g = rnn_grad(
                &x,
                &[&h0],
                &wr,
                Some(&lens),
                &o.reserve,
                Some(&og),
                &[Some(&sg)],
                &at,
            )
            .expect("rnn_grad runs");
            close("x_grad", &g.x_grad, &t("x_grad"));
            close("pre_state_grad", &g.pre_state_grad[0], &t("pre_state_grad"));
            // Where Paddle's backward disagrees with the derivative of its own forward (the
            // reverse direction's w_hh with rows of different lengths), irw follows the forward.
            let wrong: Vec<usize> = c["paddle_backward_wrong"]
                .as_array()
                .expect("list")
                .iter()
                .filter_map(|v| v.as_u64().map(|k| k as usize))
                .collect();
            assert_eq!(
                wrong,
                [3, 7],
                "the weights the fixture records Paddle as wrong on"
            );
            let (analytic, numeric) = (ts("weight_list_grad"), ts("weight_list_grad_numeric"));
            for (k, got) in g.weight_list_grad.iter().enumerate() {
                close(
                    &format!("weight_list_grad[{k}] (numeric)"),
                    got,
                    &numeric[k],
                );
                if !wrong.contains(&k) {
                    close(&format!("weight_list_grad[{k}]"), got, &analytic[k]);
                }
            }
        }
    }

    fn seq(n: usize, a: f64, b: f64, s: f64) -> Vec<f64> {
        (0..n).map(|i| s * (a * i as f64 + b).sin()).collect()
    }

    fn f64_tensor(shape: &[usize], v: Vec<f64>) -> Tensor {
        Tensor::new(shape.to_vec(), Data::F64(v)).expect("tensor")
    }

    /// Everything one gradient check needs: operands, and the loss weights of `out` and of each
    /// final state.
    struct Case {
        at: RnnAttrs,
        x: Tensor,
        states: Vec<Tensor>,
        weights: Vec<Tensor>,
        lens: Option<Tensor>,
        g_out: Vec<f64>,
        g_states: Vec<Vec<f64>>,
    }

    fn case(mode: Mode, bidirec: bool, lens: bool) -> Case {
        let (t, b, i, h, l) = (4, 3, 2, 3, 2);
        let d = if bidirec { 2 } else { 1 };
        let gh = mode.gates() * h;
        let at = attrs(mode, i as i64, h as i64, l as i64, bidirec);
        let mut weights = Vec::new();
        for (k, ld) in (0..l * d).enumerate() {
            let il = if ld / d == 0 { i } else { d * h };
            weights.push(f64_tensor(&[gh, il], seq(gh * il, 0.7, k as f64, 0.6)));
            weights.push(f64_tensor(&[gh, h], seq(gh * h, 0.45, 1.0 + k as f64, 0.5)));
        }
        for k in 0..l * d {
            weights.push(f64_tensor(&[gh], seq(gh, 0.3, 2.0 + k as f64, 0.3)));
            weights.push(f64_tensor(&[gh], seq(gh, 0.9, 3.0 + k as f64, 0.3)));
        }
        let states = (0..mode.states())
            .map(|k| f64_tensor(&[l * d, b, h], seq(l * d * b * h, 0.37, k as f64, 0.5)))
            .collect();
        Case {
            at,
            x: f64_tensor(&[t, b, i], seq(t * b * i, 0.61, 0.2, 1.0)),
            states,
            weights,
            lens: lens.then(|| Tensor::i64(&[b], vec![4, 2, 0])),
            g_out: seq(t * b * d * h, 0.29, 0.5, 1.0),
            g_states: (0..mode.states())
                .map(|k| seq(l * d * b * h, 0.53, 1.5 + k as f64, 1.0))
                .collect(),
        }
    }

    fn loss(c: &Case, x: &Tensor, states: &[Tensor], weights: &[Tensor]) -> f64 {
        let sr: Vec<&Tensor> = states.iter().collect();
        let wr: Vec<&Tensor> = weights.iter().collect();
        let o = rnn(x, &sr, &wr, c.lens.as_ref(), &c.at).expect("rnn runs");
        let dot = |t: &Tensor, g: &[f64]| -> f64 {
            t.to_f64_vec().iter().zip(g).map(|(a, b)| a * b).sum()
        };
        dot(&o.out, &c.g_out)
            + o.state
                .iter()
                .zip(&c.g_states)
                .map(|(s, g)| dot(s, g))
                .sum::<f64>()
    }

    /// `rnn_grad` is the derivative of `rnn`: central differences of
    /// `Σ out·G + Σ state·S` in f64 agree with every gradient it returns.
    fn gradient_check(mode: Mode, bidirec: bool, lens: bool) {
        let c = case(mode, bidirec, lens);
        let sr: Vec<&Tensor> = c.states.iter().collect();
        let wr: Vec<&Tensor> = c.weights.iter().collect();
        let o = rnn(&c.x, &sr, &wr, c.lens.as_ref(), &c.at).expect("rnn runs");
        let og = f64_tensor(o.out.shape(), c.g_out.clone());
        let sg: Vec<Tensor> = o
            .state
            .iter()
            .zip(&c.g_states)
            .map(|(s, g)| f64_tensor(s.shape(), g.clone()))
            .collect();
        let sgr: Vec<Option<&Tensor>> = sg.iter().map(Some).collect();
        let g = rnn_grad(
            &c.x,
            &sr,
            &wr,
            c.lens.as_ref(),
            &o.reserve,
            Some(&og),
            &sgr,
            &c.at,
        )
        .expect("rnn_grad runs");
        let eps = 1e-6;
        let numeric = |which: usize, k: usize, e: usize| -> f64 {
            let bump = |delta: f64| {
                let (mut x, mut states, mut weights) =
                    (c.x.clone(), c.states.clone(), c.weights.clone());
                let t = match which {
                    0 => &mut x,
                    1 => &mut states[k],
                    _ => &mut weights[k],
                };
                let mut v = t.to_f64_vec();
                v[e] += delta;
                *t = f64_tensor(t.shape(), v);
                loss(&c, &x, &states, &weights)
            };
            (bump(eps) - bump(-eps)) / (2.0 * eps)
        };
        let check = |what: String, analytic: &Tensor, which: usize, k: usize| {
            for (e, a) in analytic.to_f64_vec().into_iter().enumerate() {
                let n = numeric(which, k, e);
                assert!(
                    (a - n).abs() <= 1e-6 * (1.0 + n.abs()),
                    "{mode:?} bidirec {bidirec} lens {lens}: {what}[{e}]: analytic {a}, numeric {n}"
                );
            }
        };
        check("x_grad".into(), &g.x_grad, 0, 0);
        for (k, t) in g.pre_state_grad.iter().enumerate() {
            check(format!("pre_state_grad[{k}]"), t, 1, k);
        }
        assert_eq!(g.weight_list_grad.len(), c.weights.len());
        for (k, t) in g.weight_list_grad.iter().enumerate() {
            check(format!("weight_list_grad[{k}]"), t, 2, k);
        }
    }

    #[test]
    fn lstm_gradients_are_the_derivative() {
        gradient_check(Mode::Lstm, true, true);
        gradient_check(Mode::Lstm, false, false);
    }

    #[test]
    fn gru_gradients_are_the_derivative() {
        gradient_check(Mode::Gru, true, true);
        gradient_check(Mode::Gru, false, false);
    }

    #[test]
    fn simple_rnn_gradients_are_the_derivative() {
        gradient_check(Mode::RnnTanh, true, true);
        gradient_check(Mode::RnnRelu, false, true);
    }

    /// f32 and f64 compute the same function (the f32 path is the one programs use).
    #[test]
    fn f32_agrees_with_f64() {
        let c = case(Mode::Lstm, true, true);
        let to32 = |t: &Tensor| crate::exec::kernels::cast::cast(t, DType::F32);
        let (x, states, weights) = (
            to32(&c.x),
            c.states.iter().map(to32).collect::<Vec<_>>(),
            c.weights.iter().map(to32).collect::<Vec<_>>(),
        );
        let sr: Vec<&Tensor> = states.iter().collect();
        let wr: Vec<&Tensor> = weights.iter().collect();
        let o32 = rnn(&x, &sr, &wr, c.lens.as_ref(), &c.at).expect("f32");
        assert_eq!(o32.out.dtype(), DType::F32);
        let sr: Vec<&Tensor> = c.states.iter().collect();
        let wr: Vec<&Tensor> = c.weights.iter().collect();
        let o64 = rnn(&c.x, &sr, &wr, c.lens.as_ref(), &c.at).expect("f64");
        for (a, b) in o32.out.to_f64_vec().iter().zip(o64.out.to_f64_vec()) {
            assert!((a - b).abs() < 1e-5, "{a} vs {b}");
        }
    }

    /// 16-bit operands are computed in f32: outputs and gradients in bf16, the reserve in f32.
    #[test]
    fn bf16_is_computed_in_f32() {
        let c = case(Mode::Gru, true, true);
        let bf = |t: &Tensor| crate::exec::kernels::cast::cast(t, DType::BF16);
        let (x, states, weights) = (
            bf(&c.x),
            c.states.iter().map(bf).collect::<Vec<_>>(),
            c.weights.iter().map(bf).collect::<Vec<_>>(),
        );
        let sr: Vec<&Tensor> = states.iter().collect();
        let wr: Vec<&Tensor> = weights.iter().collect();
        let o = rnn(&x, &sr, &wr, c.lens.as_ref(), &c.at).expect("bf16");
        assert_eq!(o.out.dtype(), DType::BF16);
        assert_eq!(o.reserve.dtype(), DType::F32);
        // The same function of the rounded operands, in f64.
        let up = |t: &Tensor| crate::exec::kernels::cast::cast(t, DType::F64);
        let (x64, s64, w64) = (
            up(&x),
            states.iter().map(up).collect::<Vec<_>>(),
            weights.iter().map(up).collect::<Vec<_>>(),
        );
        let sr64: Vec<&Tensor> = s64.iter().collect();
        let wr64: Vec<&Tensor> = w64.iter().collect();
        let o64 = rnn(&x64, &sr64, &wr64, c.lens.as_ref(), &c.at).expect("f64");
        for (a, b) in o.out.to_f64_vec().iter().zip(o64.out.to_f64_vec()) {
            assert!((a - b).abs() <= 1e-2 * (1.0 + b.abs()), "{a} vs {b}");
        }
        let g = rnn_grad(&x, &sr, &wr, c.lens.as_ref(), &o.reserve, None, &[], &c.at)
            .expect("bf16 grad");
        assert_eq!(g.x_grad.dtype(), DType::BF16);
        assert!(g.weight_list_grad.iter().all(|w| w.dtype() == DType::BF16));
    }

    #[test]
    fn past_its_length_a_row_outputs_zero_and_keeps_its_state() {
        let c = case(Mode::Gru, false, true);
        let sr: Vec<&Tensor> = c.states.iter().collect();
        let wr: Vec<&Tensor> = c.weights.iter().collect();
        let o = rnn(&c.x, &sr, &wr, c.lens.as_ref(), &c.at).expect("runs");
        let (b, h) = (3, 3);
        let out = o.out.to_f64_vec();
        // Row 2 has length 0: all its outputs are 0 and its final state is h0.
        for t in 0..4 {
            assert!(out[(t * b + 2) * h..(t * b + 3) * h]
                .iter()
                .all(|&v| v == 0.0));
        }
        let (s, h0) = (o.state[0].to_f64_vec(), c.states[0].to_f64_vec());
        for ld in 0..2 {
            let r = (ld * b + 2) * h;
            assert_eq!(s[r..r + h], h0[r..r + h]);
        }
    }

    #[test]
    fn refusals() {
        let c = case(Mode::Lstm, false, false);
        let sr: Vec<&Tensor> = c.states.iter().collect();
        let wr: Vec<&Tensor> = c.weights.iter().collect();
        let o = rnn(&c.x, &sr, &wr, None, &c.at).expect("runs");
        let short = Tensor::f32(&[3], vec![0.0; 3]);
        let e = rnn_grad(&c.x, &sr, &wr, None, &short, None, &[], &c.at)
            .err()
            .expect("a reserve of another size is refused");
        assert!(
            e.message.contains("reserve has 3 elements"),
            "{}",
            e.message
        );
        let mut at = c.at.clone();
        at.dropout_prob = 0.3;
        let e = rnn(&c.x, &sr, &wr, None, &at).err().expect("random mask");
        assert!(e.message.contains("draws a random mask"), "{}", e.message);
        at.is_test = true;
        let o2 = rnn(&c.x, &sr, &wr, None, &at).expect("is_test: no mask");
        assert_eq!(o2.out.to_f64_vec(), o.out.to_f64_vec());
        assert!(Mode::parse("lstm").is_err());
        let e = rnn(&c.x, &sr[..1], &wr, None, &c.at)
            .err()
            .expect("LSTM needs c0");
        assert!(e.message.contains("pre_state has 1"), "{}", e.message);
        let e = rnn(&c.x, &sr, &wr[1..], None, &c.at)
            .err()
            .expect("weights");
        assert!(
            e.message.contains("weight_list has 7 tensors"),
            "{}",
            e.message
        );
    }
}
