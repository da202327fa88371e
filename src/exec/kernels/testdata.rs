//! Test support for the kernels of convolutional models: the closed-form inputs that
//! `tests/data/paddle_cnn_kernels.py` fed Paddle 3.3.1, the numbers it recorded
//! (`tests/data/paddle_cnn_kernels.json`, committed so the tests need no Paddle), and one
//! closeness check, `|a − b| ≤ tol·|b| + tol·max|b|`.

use serde_json::Value;

use crate::exec::tensor::Tensor;

/// Numbers the sequences are made of.
pub trait FromF64 {
    fn from_f64(v: f64) -> Self;
}

impl FromF64 for f32 {
    fn from_f64(v: f64) -> f32 {
        v as f32
    }
}

impl FromF64 for f64 {
    fn from_f64(v: f64) -> f64 {
        // The script rounds every input to f32 before Paddle sees it.
        v as f32 as f64
    }
}

fn seq<T: FromF64>(n: usize, f: impl Fn(f64) -> f64) -> Vec<T> {
    (0..n).map(|i| T::from_f64(f(i as f64))).collect()
}

/// `x[i] = sin(0.37 i + 0.1)`.
pub fn seq_x<T: FromF64>(n: usize) -> Vec<T> {
    seq(n, |i| (0.37 * i + 0.1).sin())
}

/// `w[i] = 0.5 cos(0.23 i)`.
pub fn seq_w<T: FromF64>(n: usize) -> Vec<T> {
    seq(n, |i| 0.5 * (0.23 * i).cos())
}

/// `dout[i] = cos(0.11 i + 0.3)`.
pub fn seq_d<T: FromF64>(n: usize) -> Vec<T> {
    seq(n, |i| (0.11 * i + 0.3).cos())
}

/// A sequence of `n` from `f(i)` (per-channel parameters).
pub fn seq_by<T: FromF64>(n: usize, f: impl Fn(f64) -> f64) -> Vec<T> {
    seq(n, f)
}

/// One recorded case by name.
pub fn paddle_case(name: &str) -> Value {
    static DATA: &str = include_str!("../../../tests/data/paddle_cnn_kernels.json");
    let v: Value = serde_json::from_str(DATA).expect("paddle_cnn_kernels.json is JSON");
    v["cases"][name].clone()
}

/// The values of field `key` of a case.
pub fn floats(case: &Value, key: &str) -> Vec<f64> {
    case[key]
        .as_array()
        .unwrap_or_else(|| panic!("case has no `{key}`"))
        .iter()
        .map(|v| v.as_f64().expect("a number"))
        .collect()
}

/// `|a − b| ≤ tol·|b| + tol·max|b|` per element.
pub struct Close(pub f64);

impl Close {
    pub fn new(tol: f64) -> Close {
        Close(tol)
    }

    pub fn all<T: Copy + Into<f64>>(&self, what: &str, got: &[T], want: &[f64]) {
        assert_eq!(got.len(), want.len(), "{what}: length");
        let max = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (i, (&a, &b)) in got.iter().zip(want).enumerate() {
            let a: f64 = a.into();
            assert!(
                (a - b).abs() <= self.0 * b.abs() + self.0 * max,
                "{what}[{i}]: got {a}, want {b}"
            );
        }
    }

    /// `got` against field `key` of a Paddle case.
    pub fn paddle(&self, case_name: &str, key: &str, got: &Tensor, case: &Value) {
        self.all(
            &format!("{case_name}.{key}"),
            &got.to_f64_vec(),
            &floats(case, key),
        );
    }
}
