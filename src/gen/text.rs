//! The text builder of `irw gen cnn` and `irw gen lm`, and the parts every program they make
//! shares: a learning rate fed as a persistable `pd_op.data`, the parameters as
//! `builtin.parameter` ops, one `sgd_` per trainable parameter, and a startup program that
//! initializes them. Each generator writes only its model's forward and backward ops.
//!
//! The forms follow Paddle 3.3.1's own dumps (`fixtures/paddle-zoo/lenet_momentum_before.ir`):
//! values numbered in print order, parameters inserted at the start of main (so they print in
//! reverse creation order), the optimizer ops in the order `append_backward` returns its
//! (param, grad) pairs.

use std::fmt::Write;

const F: &str = "f32";

pub(super) fn ty(shape: &[i64]) -> String {
    let mut s = String::from("tensor<");
    for d in shape {
        let _ = write!(s, "{d}x");
    }
    s.push_str(F);
    s.push('>');
    s
}

/// A value: its number and its type's text.
#[derive(Clone)]
pub(super) struct V(usize, String);

/// One program's text, values numbered in print order.
pub(super) struct Text {
    pub(super) out: String,
    next: usize,
}

impl Text {
    pub(super) fn new() -> Text {
        Text {
            out: String::new(),
            next: 0,
        }
    }

    /// Prints `(%r…) = "name" (%o…) {attrs} : (types) -> types`; a result type `None` is
    /// `<<NULL TYPE>>`, an operand `None` `<<NULL VALUE>>`.
    pub(super) fn op(
        &mut self,
        name: &str,
        operands: &[Option<&V>],
        attrs: &str,
        results: &[Option<String>],
    ) -> Vec<V> {
        let vals: Vec<V> = results
            .iter()
            .map(|t| {
                let v = V(
                    self.next,
                    t.clone().unwrap_or_else(|| "<<NULL TYPE>>".into()),
                );
                self.next += 1;
                v
            })
            .collect();
        let ids: Vec<String> = vals.iter().map(|v| format!("%{}", v.0)).collect();
        let ops: Vec<String> = operands
            .iter()
            .map(|o| o.map_or("<<NULL VALUE>>".to_string(), |v| format!("%{}", v.0)))
            .collect();
        let op_tys: Vec<String> = operands
            .iter()
            .map(|o| o.map_or("<<NULL TYPE>>".to_string(), |v| v.1.clone()))
            .collect();
        let res_tys: Vec<String> = vals.iter().map(|v| v.1.clone()).collect();
        let lhs = if ids.is_empty() {
            "()".to_string()
        } else {
            format!("({})", ids.join(", "))
        };
        let _ = writeln!(
            self.out,
            "    {lhs} = \"{name}\" ({}) {{{attrs}}} : ({}) -> {}",
            ops.join(", "),
            op_tys.join(", "),
            res_tys.join(", ")
        );
        vals
    }

    pub(super) fn one(&mut self, name: &str, operands: &[Option<&V>], attrs: &str, t: String) -> V {
        self.op(name, operands, attrs, &[Some(t)]).remove(0)
    }
}

/// A trainable parameter (`trainable: false` for running statistics).
fn parameter(t: &mut Text, name: &str, shape: &[i64], trainable: bool) -> V {
    t.one(
        "builtin.parameter",
        &[],
        &format!(
            "is_distributed:[false],is_parameter:[true],need_clip:[true],op_role:0,parameter_name:\"{name}\",persistable:[true],stop_gradient:[{}],trainable:[{trainable}]",
            !trainable
        ),
        ty(shape),
    )
}

/// A parameter as the generators declare it: name, shape, trainable (`false`: a running
/// statistic, which no optimizer updates).
pub(super) type Param = (String, Vec<i64>, bool);

/// The learning rate: a persistable `pd_op.data` the startup program sets to 0.1.
pub(super) fn learning_rate(t: &mut Text) -> V {
    t.one(
        "pd_op.data",
        &[],
        "dtype:float32,name:\"learning_rate_0\",op_role:0,persistable:[true],place:Place(undefined:0),shape:[],stop_gradient:[true]",
        "tensor<f32>".into(),
    )
}

/// The parameters' values in main, by name.
pub(super) struct Params(Vec<(String, V)>);

impl Params {
    /// Declares `params` (in creation order) as `builtin.parameter` ops: inserted at the start
    /// of main, they print in reverse creation order.
    pub(super) fn declare(t: &mut Text, params: &[Param]) -> Params {
        Params(
            params
                .iter()
                .rev()
                .map(|(name, shape, trainable)| {
                    (name.clone(), parameter(t, name, shape, *trainable))
                })
                .collect(),
        )
    }

    pub(super) fn get(&self, name: &str) -> V {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| unreachable!("parameter {name} was declared"))
    }
}

/// One `sgd_` per trainable parameter on its gradient in `grads`, in the order append_backward
/// returns (param, grad): reverse creation order.
pub(super) fn sgd(t: &mut Text, params: &[Param], p: &Params, lr: &V, grads: &[(&str, &V)]) {
    for (name, shape, trainable) in params.iter().rev() {
        if !trainable {
            continue;
        }
        let g = grads
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
            .unwrap_or_else(|| unreachable!("every trainable parameter has a gradient"));
        t.op(
            "pd_op.sgd_",
            &[Some(&p.get(name)), Some(lr), Some(g), None],
            "multi_precision:false,op_role:2,stop_gradient:[true,false]",
            &[Some(ty(shape)), None],
        );
    }
}

/// The whole text: main, then `startup { … }` initializing `params` and the learning rate.
pub(super) fn program(main: Text, params: &[Param]) -> String {
    let mut out = String::from("{\n");
    out.push_str(&main.out);
    out.push_str("}\nstartup {\n");
    out.push_str(&startup(params));
    out.push_str("}\n");
    out
}

/// Initializers: weights uniform in Xavier bounds, biases and running means zero, batch-norm
/// scales and running variances one, the learning rate 0.1.
fn startup(params: &[Param]) -> String {
    let mut t = Text::new();
    for (name, shape, _) in params {
        let v = if shape.len() >= 2 {
            let (fan_in, fan_out) = if shape.len() == 4 {
                let rf = shape[2] * shape[3];
                (shape[1] * rf, shape[0] * rf)
            } else {
                (shape[0], shape[1])
            };
            let bound = (6.0 / (fan_in + fan_out) as f64).sqrt();
            let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
            let s = t.one(
                "pd_op.full_int_array",
                &[],
                &format!(
                    "dtype:int64,place:Place(cpu),stop_gradient:[true],value:[{}]",
                    dims.join(",")
                ),
                format!("tensor<{}xi64>", shape.len()),
            );
            let mut lo = String::new();
            crate::gen::num::push_g(&mut lo, -bound);
            let mut hi = String::new();
            crate::gen::num::push_g(&mut hi, bound);
            let a = t.one(
                "pd_op.full",
                &[],
                &format!(
                    "dtype:float32,place:Place(cpu),shape:[1],stop_gradient:[true],value:{lo}"
                ),
                ty(&[1]),
            );
            let b = t.one(
                "pd_op.full",
                &[],
                &format!(
                    "dtype:float32,place:Place(cpu),shape:[1],stop_gradient:[true],value:{hi}"
                ),
                ty(&[1]),
            );
            t.one(
                "pd_op.uniform",
                &[Some(&s), Some(&a), Some(&b)],
                "dtype:float32,persistable:[true],place:Place(undefined:0),seed:0,stop_gradient:[true]",
                ty(shape),
            )
        } else {
            let value = if name.ends_with(".w_0") || name.ends_with(".w_2") {
                1
            } else {
                0
            };
            t.one(
                "pd_op.full",
                &[],
                &format!(
                    "dtype:float32,persistable:[true],place:Place(undefined:0),shape:[{}],stop_gradient:[true],value:{value}",
                    shape[0]
                ),
                ty(shape),
            )
        };
        t.op(
            "builtin.set_parameter",
            &[Some(&v)],
            &format!("parameter_name:\"{name}\""),
            &[],
        );
    }
    let lr = t.one(
        "pd_op.full",
        &[],
        "dtype:float32,persistable:[true],place:Place(undefined:0),shape:[],stop_gradient:[true],value:0.1",
        "tensor<f32>".into(),
    );
    t.op(
        "builtin.shadow_output",
        &[Some(&lr)],
        "output_name:\"learning_rate_0\"",
        &[],
    );
    t.out
}
