//! `einsum` and its grad for one or two operands, without ellipsis: the equation's labels name
//! axes, every label shared by the operands is multiplied along, every label missing from the
//! output is summed over, a label repeated within one operand reads its diagonal.
//!
//! Forward and grad are one loop over every assignment of values to the labels ([`Contraction`]),
//! each operand and the output addressed through per-label strides (a repeated label's strides
//! add up, which is how a diagonal is read and how its gradient lands on the diagonal only). The
//! gradient of an operand is the output gradient times the other operand, added at the operand's
//! offset, so repeated and summed labels need no special case. Sums run in f64, rounded once.
//!
//! Paddle's `einsum` returns, besides `out`, an `inner_cache` vector (declared as empty tensors)
//! and an `xshape` vector typed as the operands, which is what its `einsum_grad` reads the
//! operands from; irw fills `xshape` with the operands and `inner_cache` with empty tensors. An
//! equation with `...` is refused.

use super::float_dtype;
use crate::exec::dtype::DType;
use crate::exec::error::KResult;
use crate::exec::tensor::Tensor;
use crate::kbail;

/// A parsed equation over concrete operand shapes.
struct Contraction {
    /// The size of each label.
    sizes: Vec<usize>,
    /// For each operand, then the output: the stride each label contributes to its offset.
    strides: Vec<Vec<usize>>,
    out_shape: Vec<usize>,
}

fn parse(equation: &str, shapes: &[&[usize]]) -> KResult<Contraction> {
    let eq: String = equation.chars().filter(|c| !c.is_whitespace()).collect();
    if eq.contains('.') {
        kbail!(
            "einsum: equation {:?} has an ellipsis, which the executor does not support",
            equation
        );
    }
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l, Some(r)),
        None => (eq.as_str(), None),
    };
    let terms: Vec<&str> = lhs.split(',').collect();
    if terms.len() != shapes.len() || !(1..=2).contains(&terms.len()) {
        kbail!(
            "einsum: equation {:?} names {} operands, {} are given (the executor takes 1 or 2)",
            equation,
            terms.len(),
            shapes.len()
        );
    }
    let mut labels: Vec<char> = Vec::new();
    let mut sizes: Vec<usize> = Vec::new();
    let mut count: Vec<usize> = Vec::new();
    for (term, shape) in terms.iter().zip(shapes) {
        if term.chars().count() != shape.len() {
            kbail!(
                "einsum: term {:?} has {} labels, its operand {:?} has rank {}",
                term,
                term.chars().count(),
                shape,
                shape.len()
            );
        }
        for (c, &d) in term.chars().zip(shape.iter()) {
            if !c.is_ascii_alphabetic() {
                kbail!("einsum: {:?} is not a label in {:?}", c, equation);
            }
            match labels.iter().position(|&l| l == c) {
                Some(k) if sizes[k] != d => kbail!(
                    "einsum: label {:?} has size {} and {} in {:?}",
                    c,
                    sizes[k],
                    d,
                    equation
                ),
                Some(k) => count[k] += 1,
                None => {
                    labels.push(c);
                    sizes.push(d);
                    count.push(1);
                }
            }
        }
    }
    let out: Vec<char> = match rhs {
        Some(r) => r.chars().collect(),
        None => {
            let mut once: Vec<char> = (0..labels.len())
                .filter(|&k| count[k] == 1)
                .map(|k| labels[k])
                .collect();
            once.sort_unstable();
            once
        }
    };
    let mut out_pos = Vec::with_capacity(out.len());
    for (i, c) in out.iter().enumerate() {
        match labels.iter().position(|l| l == c) {
            Some(k) if !out[..i].contains(c) => out_pos.push(k),
            Some(_) => kbail!("einsum: output label {:?} repeats in {:?}", c, equation),
            None => kbail!(
                "einsum: output label {:?} is in no operand of {:?}",
                c,
                equation
            ),
        }
    }
    let stride_of = |term_labels: &[usize], shape: &[usize]| {
        let mut s = vec![0usize; labels.len()];
        let mut step = 1;
        for (ax, &k) in term_labels.iter().enumerate().rev() {
            s[k] += step;
            step *= shape[ax];
        }
        s
    };
    let mut strides = Vec::with_capacity(shapes.len() + 1);
    for (term, shape) in terms.iter().zip(shapes) {
        let ks: Vec<usize> = term
            .chars()
            .map(|c| labels.iter().position(|&l| l == c).unwrap_or(0))
            .collect();
        strides.push(stride_of(&ks, shape));
    }
    let out_shape: Vec<usize> = out_pos.iter().map(|&k| sizes[k]).collect();
    strides.push(stride_of(&out_pos, &out_shape));
    Ok(Contraction {
        sizes,
        strides,
        out_shape,
    })
}

impl Contraction {
    /// Calls `f` with each assignment's offset into every operand and the output.
    fn each(&self, mut f: impl FnMut(&[usize])) {
        if self.sizes.contains(&0) {
            return;
        }
        let n = self.sizes.len();
        let mut idx = vec![0usize; n];
        let mut offs = vec![0usize; self.strides.len()];
        loop {
            f(&offs);
            let mut k = n;
            loop {
                if k == 0 {
                    return;
                }
                k -= 1;
                idx[k] += 1;
                for (o, s) in offs.iter_mut().zip(&self.strides) {
                    *o += s[k];
                }
                if idx[k] < self.sizes[k] {
                    break;
                }
                for (o, s) in offs.iter_mut().zip(&self.strides) {
                    *o -= s[k] * idx[k];
                }
                idx[k] = 0;
            }
        }
    }
}

fn rounded(shape: &[usize], v: Vec<f64>, dt: DType) -> KResult<Tensor> {
    Tensor::from_f32_as(shape, v.into_iter().map(|v| v as f32).collect(), dt)
}

/// `einsum(x) {equation}`: the contraction of the one or two operands in `x`.
pub fn einsum(x: &[&Tensor], equation: &str) -> KResult<Tensor> {
    let shapes: Vec<&[usize]> = x.iter().map(|t| t.shape()).collect();
    let c = parse(equation, &shapes)?;
    let vals: Vec<Vec<f64>> = x.iter().map(|t| t.to_f64_vec()).collect();
    let mut out = vec![0.0f64; c.out_shape.iter().product()];
    let last = vals.len();
    c.each(|offs| {
        let p: f64 = vals.iter().zip(offs).map(|(v, &o)| v[o]).product();
        out[offs[last]] += p;
    });
    rounded(&c.out_shape, out, float_dtype(x[0].dtype()))
}

/// `einsum_grad(x_shape, inner_cache, out_grad) {equation}`: the gradient of each operand `x`
/// (read from `x_shape`, see the module doc).
pub fn einsum_grad(x: &[&Tensor], dout: &Tensor, equation: &str) -> KResult<Vec<Tensor>> {
    let shapes: Vec<&[usize]> = x.iter().map(|t| t.shape()).collect();
    let c = parse(equation, &shapes)?;
    if dout.shape() != c.out_shape.as_slice() {
        kbail!(
            "einsum_grad: out_grad has shape {:?}, the output has {:?}",
            dout.shape(),
            c.out_shape
        );
    }
    let vals: Vec<Vec<f64>> = x.iter().map(|t| t.to_f64_vec()).collect();
    let g = dout.to_f64_vec();
    let mut grads: Vec<Vec<f64>> = x.iter().map(|t| vec![0.0; t.numel()]).collect();
    let last = vals.len();
    c.each(|offs| {
        let go = g[offs[last]];
        for k in 0..last {
            let others: f64 = (0..last)
                .filter(|&j| j != k)
                .map(|j| vals[j][offs[j]])
                .product();
            grads[k][offs[k]] += go * others;
        }
    });
    x.iter()
        .zip(grads)
        .map(|(t, v)| rounded(t.shape(), v, float_dtype(t.dtype())))
        .collect()
}
