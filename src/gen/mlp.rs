//! `irw gen mlp`: the training program of an N-layer MLP, printed as Paddle 3.3.1 prints it.
//!
//! The model is what the fixtures were built from: `paddle.nn.Linear` layers of widths
//! `in_features → hidden → … → hidden → out_features` (8 → 16 → … → 16 → 4 by default) with a
//! ReLU between layers, an MSE loss (`subtract`, `elementwise_pow` by 2, `mean`), the ops
//! `append_backward` adds, and one optimizer op per parameter. The output is one file:
//!
//! ```text
//! {
//!     …main program, exactly as `print(main_program)`…
//! }
//! startup {
//!     …startup program's ops, exactly as `print(startup_program)` prints them…
//! }
//! ```
//!
//! # What Paddle does that the generator reproduces
//!
//! - Parameters are created layer by layer (`linear_0.w_0`, `linear_0.b_0`, `linear_1.w_0`, …),
//!   and each `builtin.parameter` op is inserted at the *start* of main, so main lists them in
//!   reverse creation order (`linear_{N-1}.b_0` first). `append_backward` returns the
//!   (param, grad) pairs in that order, so the optimizer ops follow it too ("optimizer order").
//! - Persistable optimizer state (learning rate, Adam moments and beta-pow accumulators, momentum
//!   velocities) is also a `pd_op.data` inserted at the start of main: it appears before the
//!   parameters, in reverse creation order. Creation order is: the learning rate, then per
//!   parameter in optimizer order its accumulators (`moment1`, `moment2`, `beta1_pow_acc`,
//!   `beta2_pow_acc` for Adam). bf16 master weights (`<p>_fp32_master_0`) are the exception
//!   `master_grad_before.ir` shows: they follow the learning rate in creation order.
//! - Value ids are dense, in print order, one per op result including `<<NULL TYPE>>` ones.
//! - `struct_name` counts `Linear` layers: `/Linear/`, `/Linear_1/`, `/Linear_2/`, …
//! - The first layer's `matmul_grad` has no x-gradient (`x` does not need one):
//!   `<<NULL TYPE>>`, as do the second results of `elementwise_pow_grad` and `subtract_grad`.
//! - Weights start from Xavier-uniform bounds `±sqrt(6 / (fan_in + fan_out))`, printed as C's
//!   `%g` prints them (see `super::num::push_g`); biases from zeros.
//! - `op_role` is 0 (forward), 1 (backward) or 2 (optimize). With `roles: false`
//!   (`before_noroles.ir`) no op has one, and the backward ops print `stop_gradient` all true.
//!
//! # Fidelity
//!
//! Byte-identical to Paddle's dumps (checked in `tests/all/gen_mlp.rs`): SGD f32 with 3 layers
//! (`before.ir` + `startup_before.ir`), Adam f32 3 layers (`before_adam.ir` +
//! `startup_before_adam.ir`), SGD bf16 2 layers (`master_grad_before.ir` +
//! `master_grad_startup_before.ir`), SGD f32 3 layers with `allreduce` (main of
//! `allreduce_sync1_before.ir`) and without roles (`before_noroles.ir`). With
//! `first_layer_index: 72, lr_index: 2` (the name counters of the process that made it), every
//! forward and backward op of the 256-layer program occurs, in order and identical up to value
//! ids, in Paddle's gradient-merge output `after_256.ir`.
//!
//! Built by analogy, with no Paddle dump to compare against (the structure is what Paddle's
//! optimizer code does; the details below are this generator's choices):
//! - `Momentum`: `pd_op.momentum_(param, grad, velocity, lr, master|NULL)` with attributes
//!   `mu:0.9, use_nesterov:false, regularization_method:"", regularization_coeff:0,
//!   rescale_grad:1`, accumulator `<p>_velocity_0` (zeros), results' `stop_gradient` all false
//!   as for `adam_`.
//! - `AdamW`: like Adam, op `pd_op.adamw_` with the extra attributes `coeff:0.01, lr_ratio:1,
//!   with_decay:true`.
//! - bf16 with an accumulator optimizer: accumulators belong to the master weight
//!   (`<p>_fp32_master_0_moment1_0`, f32), the master weight is the optimizer's `master_param`
//!   and `multi_precision` is true; in main the accumulators come first, then the learning rate,
//!   then the masters.
//! - `allreduce` with bf16: the collective acts on the bf16 gradient, before the master-grad cast.
//!   The startup program with `allreduce` is the plain one (`allreduce_sync1_before.ir` has no
//!   startup dump of its own; a collective adds no state).
//! - `allreduce` with [`Collective::AllReduce`]: `pd_op.all_reduce {reduce_type:0,ring_id:0}`
//!   (SUM) in place of `c_allreduce_sum`, printed as Paddle 3.3.1 prints the op (attributes
//!   alphabetical, as in the Engine's `mlp3_tanh_sgd_dp2_k2_before.ir`); it is the op Paddle's
//!   CPU (gloo) executor runs, `c_allreduce_sum` has no CPU kernel.
//! - `roles: false` with `allreduce`: the collectives are backward ops and print
//!   `stop_gradient:[true]` like them.
//! - The learning rate is 0.1 for SGD and Momentum and 0.01 for Adam and AdamW (as in the
//!   fixtures) unless [`MlpOptions::learning_rate`] says otherwise.
//! - `loss_scaling` (f32): the ops `paddle.static.amp`'s decorator adds, in the form of
//!   `tests/exec_fixtures/amp/mlp_loss_scaling.ir` (which Paddle 3.3.1 printed): the mean loss
//!   times a persistable `[1]` `loss_scaling` (`pd_op.multiply`, so backward starts with
//!   `multiply_grad`); `num_good_steps` and `num_bad_steps` (int32 `[1]`); persistable data ops
//!   printed after the learning rate (`loss_scaling` last) and initialized before it in startup;
//!   at the start of the optimize stage `check_finite_and_unscale_` and `update_loss_scaling_`,
//!   each on a `builtin.combine` of the gradients in optimizer order and followed by a
//!   `builtin.split`, with the decorator's defaults (initial scale 32768, `incr_every_n_steps`
//!   1000, `decr_every_n_nan_or_inf` 2, `incr_ratio` 2, `decr_ratio` 0.8, `stop_update` a
//!   `full` false); the optimizers read the gradients themselves.

use std::num::NonZeroUsize;

use super::num::{push_g, push_int, push_uint};

/// The optimizer whose update ops end the main program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Optimizer {
    /// `pd_op.sgd_` (`before.ir`).
    #[default]
    Sgd,
    /// `pd_op.momentum_` with a velocity accumulator (by analogy; no fixture).
    Momentum,
    /// `pd_op.adam_` with moment and beta-pow accumulators (`before_adam.ir`).
    Adam,
    /// `pd_op.adamw_`, Adam with decoupled weight decay (by analogy; no fixture).
    AdamW,
}

/// The op a data-parallel program sums each gradient over the ranks with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Collective {
    /// `pd_op.c_allreduce_sum {ring_id:0,use_calc_stream:true,use_model_parallel:false}`, as in
    /// `allreduce_sync1_before.ir` (GPU kernels only in Paddle 3.3.1).
    #[default]
    CAllreduceSum,
    /// `pd_op.all_reduce {reduce_type:0,ring_id:0}`: SUM, the op Paddle's CPU/gloo executor runs.
    AllReduce,
}

impl Collective {
    /// Every collective, in the order the command line lists them.
    pub const ALL: [Collective; 2] = [Collective::CAllreduceSum, Collective::AllReduce];

    /// The command-line spelling: `c_allreduce_sum`, `all_reduce`.
    pub fn name(self) -> &'static str {
        match self {
            Collective::CAllreduceSum => "c_allreduce_sum",
            Collective::AllReduce => "all_reduce",
        }
    }
}

impl std::fmt::Display for Collective {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Collective {
    type Err = String;

    /// Parses the command-line spelling (a `pd_op.` prefix is accepted too).
    fn from_str(s: &str) -> Result<Self, String> {
        let bare = s.strip_prefix("pd_op.").unwrap_or(s);
        Collective::ALL
            .into_iter()
            .find(|c| c.name() == bare)
            .ok_or_else(|| {
                format!("unknown collective `{s}` (expected c_allreduce_sum or all_reduce)")
            })
    }
}

/// Element type of the parameters, activations and gradients: the generator's `--dtype`, a
/// choice between two program layouts rather than a dtype (`Bf16` also means f32 master weights
/// and master-grad casts), so it is not [`crate::ir::DType`]; its spellings are parsed by
/// [`crate::ir::DType::parse`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dtype {
    /// float32 everywhere.
    #[default]
    F32,
    /// bfloat16 parameters with f32 master weights and master-grad casts
    /// (`master_grad_before.ir`).
    Bf16,
}

/// What to generate. `MlpOptions::default()` is the configuration of `before.ir`.
#[derive(Debug, Clone, PartialEq)]
pub struct MlpOptions {
    /// Number of `Linear` layers (ReLU between them).
    pub layers: NonZeroUsize,
    pub optimizer: Optimizer,
    pub dtype: Dtype,
    /// Data parallel: a `pd_op.c_allreduce_sum` right after each parameter gradient, which the
    /// optimizer then reads (`allreduce_sync1_before.ir`).
    pub allreduce: bool,
    /// Which op `allreduce` sums the gradients with.
    pub collective: Collective,
    /// Set `op_role` on every op of main (Paddle's normal output). `false` reproduces
    /// `before_noroles.ir`.
    pub roles: bool,
    /// Width of the input `x` (8 in the fixtures).
    pub in_features: NonZeroUsize,
    /// Width of the hidden layers (16 in the fixtures).
    pub hidden: NonZeroUsize,
    /// Width of the output and of the label `y` (4 in the fixtures).
    pub out_features: NonZeroUsize,
    /// Index of the first layer's unique names: `linear_{k}.w_0` and `struct_name`
    /// `/Linear_{k}/`. 0 for a fresh Paddle process; `after_256.ir` was made with 72.
    pub first_layer_index: usize,
    /// `k` in the learning-rate variable's name `learning_rate_{k}` (0 in a fresh process).
    pub lr_index: usize,
    /// The value the startup program gives the learning rate; `None` means the fixtures'
    /// value for the optimizer (0.1 for SGD and Momentum, 0.01 for Adam and AdamW).
    pub learning_rate: Option<f64>,
    /// Dynamic loss scaling (AMP): the loss times a persistable `loss_scaling` before backward,
    /// and `check_finite_and_unscale_` and `update_loss_scaling_` on the gradients at the start
    /// of the optimize stage (see the module docs). f32 only: ignored with bf16, for which
    /// Paddle's AMP turns dynamic loss scaling off (`irw gen mlp` refuses the pair).
    pub loss_scaling: bool,
}

impl Default for MlpOptions {
    fn default() -> Self {
        MlpOptions {
            layers: nz(3),
            optimizer: Optimizer::Sgd,
            dtype: Dtype::F32,
            allreduce: false,
            collective: Collective::CAllreduceSum,
            roles: true,
            in_features: nz(8),
            hidden: nz(16),
            out_features: nz(4),
            first_layer_index: 0,
            lr_index: 0,
            learning_rate: None,
            loss_scaling: false,
        }
    }
}

impl MlpOptions {
    /// The default configuration with `layers` layers.
    pub fn with_layers(layers: NonZeroUsize) -> Self {
        MlpOptions {
            layers,
            ..MlpOptions::default()
        }
    }

    fn lr_value(&self) -> f64 {
        self.learning_rate.unwrap_or(match self.optimizer {
            Optimizer::Sgd | Optimizer::Momentum => 0.1,
            Optimizer::Adam | Optimizer::AdamW => 0.01,
        })
    }
}

impl Optimizer {
    /// Every optimizer, in the order the command line lists them.
    pub const ALL: [Optimizer; 4] = [
        Optimizer::Sgd,
        Optimizer::Momentum,
        Optimizer::Adam,
        Optimizer::AdamW,
    ];

    /// The command-line spelling: `sgd`, `momentum`, `adam`, `adamw`.
    pub fn name(self) -> &'static str {
        match self {
            Optimizer::Sgd => "sgd",
            Optimizer::Momentum => "momentum",
            Optimizer::Adam => "adam",
            Optimizer::AdamW => "adamw",
        }
    }
}

impl std::fmt::Display for Optimizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Optimizer {
    type Err = String;

    /// Parses the command-line spelling (ASCII case-insensitive).
    fn from_str(s: &str) -> Result<Self, String> {
        Optimizer::ALL
            .into_iter()
            .find(|o| o.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                format!("unknown optimizer `{s}` (expected sgd, momentum, adam or adamw)")
            })
    }
}

impl Dtype {
    /// Every dtype, in the order the command line lists them.
    pub const ALL: [Dtype; 2] = [Dtype::F32, Dtype::Bf16];

    /// The command-line spelling: `f32`, `bf16`.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::Bf16 => "bf16",
        }
    }
}

impl std::fmt::Display for Dtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Dtype {
    type Err = String;

    /// Parses `f32` or `bf16` (ASCII case-insensitive; `float32` and `bfloat16` too): the IR's
    /// parser of both spellings ([`crate::ir::DType::parse`]), then the two dtypes the generator
    /// makes programs in.
    fn from_str(s: &str) -> Result<Self, String> {
        match crate::ir::DType::parse(&s.to_ascii_lowercase()) {
            Some(crate::ir::DType::F32) => Ok(Dtype::F32),
            Some(crate::ir::DType::BF16) => Ok(Dtype::Bf16),
            _ => Err(format!("unknown dtype `{s}` (expected f32 or bf16)")),
        }
    }
}

fn nz(n: usize) -> NonZeroUsize {
    NonZeroUsize::new(n).unwrap_or(NonZeroUsize::MIN)
}

/// Generates main and startup program of the MLP `opts` describes, in one string (see the
/// module docs for the layout). Runs in time and memory linear in `opts.layers`.
pub fn mlp(opts: &MlpOptions) -> String {
    let capacity = estimate_len(opts);
    let mut g = Gen::new(opts, String::with_capacity(capacity));
    g.main();
    g.out.push_str("startup {\n");
    g.startup();
    g.out.push_str("}\n");
    g.out
}

/// [`mlp`], failing instead of aborting when the text's memory cannot be had.
pub fn try_mlp(opts: &MlpOptions) -> Result<String, std::collections::TryReserveError> {
    let mut out = String::new();
    out.try_reserve_exact(estimate_len(opts).saturating_add(estimate_len(opts) / 16))?;
    let mut g = Gen::new(opts, out);
    g.main();
    g.out.push_str("startup {\n");
    g.startup();
    g.out.push_str("}\n");
    Ok(g.out)
}

/// An upper-bound guess of the output length, so that the output string is allocated once:
/// the per-layer size is measured on 1- and 2-layer programs and widened for the longer value
/// ids and names of a large program. Unused capacity is never touched, so it costs address
/// space, not memory.
/// The length of the text [`mlp`] makes for `opts` (an estimate within a few percent, from
/// generating one and two layers), without generating it.
pub fn estimate_len(opts: &MlpOptions) -> usize {
    let layers = opts.layers.get();
    if layers <= 2 {
        return 16 * 1024;
    }
    let small = |n: usize| {
        let mut o = opts.clone();
        o.layers = nz(n);
        let mut g = Gen::new(&o, String::new());
        g.main();
        g.startup();
        (g.out, g.next)
    };
    let (one, _) = small(1);
    let (two, ids_two) = small(2);
    let per_layer = two.len().saturating_sub(one.len());
    let refs_per_layer = two
        .matches('%')
        .count()
        .saturating_sub(one.matches('%').count());
    let names_per_layer =
        (two.matches("linear_").count()).saturating_sub(one.matches("linear_").count());
    let max_id = ids_two.saturating_mul(layers as u64);
    let id_digits = digits(max_id);
    let name_digits = digits(opts.first_layer_index.saturating_add(layers) as u64);
    let per_layer = per_layer + refs_per_layer * id_digits + names_per_layer * name_digits;
    one.len().saturating_add(per_layer.saturating_mul(layers))
}

fn digits(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 10 {
        v /= 10;
        n += 1;
    }
    n
}

/// Element types as Paddle spells them in types (`f32`) and in `dtype` attributes (`float32`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Elem {
    F32,
    Bf16,
    I64,
    I32,
    Bool,
}

impl Elem {
    fn type_name(self) -> &'static str {
        match self {
            Elem::F32 => "f32",
            Elem::Bf16 => "bf16",
            Elem::I64 => "i64",
            Elem::I32 => "i32",
            Elem::Bool => "b",
        }
    }

    fn attr_name(self) -> &'static str {
        match self {
            Elem::F32 => "float32",
            Elem::Bf16 => "bfloat16",
            Elem::I64 => "int64",
            Elem::I32 => "int32",
            Elem::Bool => "bool",
        }
    }
}

/// A dense tensor type of rank 0 to 2; a dimension of -1 is dynamic (the batch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ty {
    dims: [i64; 2],
    rank: u8,
    elem: Elem,
}

impl Ty {
    fn scalar(elem: Elem) -> Ty {
        Ty {
            dims: [0, 0],
            rank: 0,
            elem,
        }
    }

    fn vec(n: usize, elem: Elem) -> Ty {
        Ty {
            dims: [dim(n), 0],
            rank: 1,
            elem,
        }
    }

    fn mat(rows: i64, cols: usize, elem: Elem) -> Ty {
        Ty {
            dims: [rows, dim(cols)],
            rank: 2,
            elem,
        }
    }

    /// A batch of `width`-wide rows.
    fn act(width: usize, elem: Elem) -> Ty {
        Ty::mat(-1, width, elem)
    }

    fn with_elem(self, elem: Elem) -> Ty {
        Ty { elem, ..self }
    }

    fn dims(&self) -> &[i64] {
        &self.dims[..usize::from(self.rank)]
    }
}

fn dim(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// One operand or result slot: a value, or Paddle's absent optional (`<<NULL VALUE>>`,
/// `<<NULL TYPE>>`).
type Slot = Option<u64>;

/// Accumulators of one parameter, in creation order: (name suffix, shape is [1] rather than
/// the parameter's, startup fill value).
fn accumulators(opt: Optimizer) -> &'static [(&'static str, bool, f64)] {
    match opt {
        Optimizer::Sgd => &[],
        Optimizer::Momentum => &[("_velocity_0", false, 0.0)],
        Optimizer::Adam | Optimizer::AdamW => &[
            ("_moment1_0", false, 0.0),
            ("_moment2_0", false, 0.0),
            ("_beta1_pow_acc_0", true, 0.9),
            ("_beta2_pow_acc_0", true, 0.999),
        ],
    }
}

/// Dynamic loss scaling's state, in creation order: the scale and its two step counters.
const AMP_STATE: [(&str, Elem); 3] = [
    ("loss_scaling", Elem::F32),
    ("num_good_steps", Elem::I32),
    ("num_bad_steps", Elem::I32),
];

/// The initial loss scale, 2^15 (`paddle.static.amp.decorate`'s `init_loss_scaling`).
const LOSS_SCALE: f64 = 32768.0;

/// Adam's beta1, beta2 and epsilon, which PIR materializes as `pd_op.full` operands.
const ADAM_HYPER: [f64; 3] = [0.9, 0.999, 1e-8];

/// Per-parameter ids, indexed by creation order: `2 * layer` is the weight, `2 * layer + 1`
/// the bias.
#[derive(Debug, Clone, Copy, Default)]
struct ParamIds {
    /// `builtin.parameter` result in main.
    value: u64,
    /// Master-weight `pd_op.data` in main (bf16 only).
    master: u64,
    /// Accumulator `pd_op.data`s in main, in [`accumulators`] order.
    accs: [u64; 4],
    /// The gradient the optimizer reads (after all-reduce and master-grad cast).
    grad: u64,
    /// The startup value that initializes the parameter.
    init: u64,
}

struct Gen<'o> {
    out: String,
    /// Next value id of the program being printed.
    next: u64,
    o: &'o MlpOptions,
    /// Element type of parameters and activations.
    pe: Elem,
    layers: usize,
    params: Vec<ParamIds>,
    /// Float attributes already formatted, by bit pattern (a handful of values).
    floats: Vec<(u64, String)>,
    /// With `loss_scaling`: the `pd_op.data` of `loss_scaling`, `num_good_steps` and
    /// `num_bad_steps` in main.
    amp: [u64; 3],
}

impl<'o> Gen<'o> {
    fn new(o: &'o MlpOptions, out: String) -> Self {
        let layers = o.layers.get();
        Gen {
            out,
            next: 0,
            o,
            pe: match o.dtype {
                Dtype::F32 => Elem::F32,
                Dtype::Bf16 => Elem::Bf16,
            },
            layers,
            params: vec![ParamIds::default(); 2 * layers],
            floats: Vec::new(),
            amp: [0; 3],
        }
    }

    fn bf16(&self) -> bool {
        self.o.dtype == Dtype::Bf16
    }

    /// Whether the program has dynamic loss scaling: `loss_scaling`, for f32 only.
    fn amp_on(&self) -> bool {
        self.o.loss_scaling && !self.bf16()
    }

    // ---- model shape ----------------------------------------------------------------------

    fn fan_in(&self, layer: usize) -> usize {
        if layer == 0 {
            self.o.in_features.get()
        } else {
            self.o.hidden.get()
        }
    }

    fn fan_out(&self, layer: usize) -> usize {
        if layer + 1 == self.layers {
            self.o.out_features.get()
        } else {
            self.o.hidden.get()
        }
    }

    /// Type of parameter `idx` (creation order) in the parameter dtype.
    fn param_ty(&self, idx: usize) -> Ty {
        let layer = idx / 2;
        if idx.is_multiple_of(2) {
            Ty::mat(dim(self.fan_in(layer)), self.fan_out(layer), self.pe)
        } else {
            Ty::vec(self.fan_out(layer), self.pe)
        }
    }

    /// Parameter indices in the order the optimizer ops update them and create their
    /// accumulators: optimizer order, or with `loss_scaling` by name as strings (the AMP
    /// decorator hands its gradients to `Optimizer.apply_gradients`, which sorts them so:
    /// `linear_0.b_0`, `linear_0.w_0`, `linear_1.b_0`, …, `linear_10.b_0` before `linear_2.b_0`).
    fn update_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = self.opt_order().collect();
        if self.amp_on() {
            order.sort_by_cached_key(|&idx| {
                let (layer, suffix) = self.param_layer_suffix(idx);
                format!("linear_{layer}{suffix}")
            });
        }
        order
    }

    /// Parameter indices in optimizer order (the order main lists them).
    fn opt_order(&self) -> std::iter::Rev<std::ops::Range<usize>> {
        (0..2 * self.layers).rev()
    }

    // ---- low-level writers ----------------------------------------------------------------

    fn s(&mut self, s: &str) {
        self.out.push_str(s);
    }

    fn uint(&mut self, v: u64) {
        push_uint(&mut self.out, v);
    }

    fn val(&mut self, id: u64) {
        self.out.push('%');
        push_uint(&mut self.out, id);
    }

    /// `    (%a, %b) = "name" (` — allocates `results` consecutive ids and returns the first.
    fn begin(&mut self, results: usize, name: &str) -> u64 {
        let first = self.next;
        self.s("    (");
        for k in 0..results as u64 {
            if k > 0 {
                self.s(", ");
            }
            self.val(first + k);
        }
        self.next += results as u64;
        self.s(") = \"");
        self.s(name);
        self.s("\" (");
        first
    }

    /// Operand list, then the opening of the attribute dictionary.
    fn operands(&mut self, operands: &[Slot]) {
        for (k, v) in operands.iter().enumerate() {
            if k > 0 {
                self.s(", ");
            }
            match *v {
                Some(id) => self.val(id),
                None => self.s("<<NULL VALUE>>"),
            }
        }
        self.s(") {");
    }

    fn role(&mut self, role: u8) {
        if self.o.roles {
            self.s("op_role:");
            self.uint(u64::from(role));
            self.out.push(',');
        }
    }

    fn stop_gradient(&mut self, flags: &[bool]) {
        self.s("stop_gradient:[");
        for (k, &f) in flags.iter().enumerate() {
            if k > 0 {
                self.out.push(',');
            }
            self.s(if f { "true" } else { "false" });
        }
        self.out.push(']');
    }

    /// `stop_gradient` of a backward op with `n` results: false, or true without roles
    /// (`before_noroles.ir`).
    fn backward_stop_gradient(&mut self, n: usize) {
        let flag = !self.o.roles;
        self.stop_gradient(&[flag; 2][..n]);
    }

    fn ty(&mut self, t: Ty) {
        self.s("tensor<");
        for &d in t.dims() {
            push_int(&mut self.out, d);
            self.out.push('x');
        }
        self.s(t.elem.type_name());
        self.out.push('>');
    }

    fn ty_list(&mut self, types: &[Option<Ty>]) {
        for (k, t) in types.iter().enumerate() {
            if k > 0 {
                self.s(", ");
            }
            match *t {
                Some(t) => self.ty(t),
                None => self.s("<<NULL TYPE>>"),
            }
        }
    }

    /// `} : (inputs) -> outputs` and the end of the line.
    fn signature(&mut self, inputs: &[Option<Ty>], outputs: &[Option<Ty>]) {
        self.s("} : (");
        self.ty_list(inputs);
        self.s(") -> ");
        self.ty_list(outputs);
        self.out.push('\n');
    }

    /// `[d0,d1]`, as shape and int-array attributes print.
    fn dims_attr(&mut self, dims: &[i64]) {
        self.out.push('[');
        for (k, &d) in dims.iter().enumerate() {
            if k > 0 {
                self.out.push(',');
            }
            push_int(&mut self.out, d);
        }
        self.out.push(']');
    }

    /// A float attribute, `%g`-formatted once per distinct value (the same few values repeat
    /// on every layer, and formatting a float costs more than the rest of a line).
    fn g(&mut self, v: f64) {
        let bits = v.to_bits();
        if let Some((_, s)) = self.floats.iter().find(|(b, _)| *b == bits) {
            self.out.push_str(s);
            return;
        }
        let mut s = String::new();
        push_g(&mut s, v);
        self.out.push_str(&s);
        self.floats.push((bits, s));
    }

    // ---- names ----------------------------------------------------------------------------

    /// Parameter `idx`'s name is `linear_{layer}{suffix}`: a layer's weight, then its bias.
    fn param_layer_suffix(&self, idx: usize) -> (u64, &'static str) {
        let layer = self.o.first_layer_index.saturating_add(idx / 2) as u64;
        (
            layer,
            if idx.is_multiple_of(2) {
                ".w_0"
            } else {
                ".b_0"
            },
        )
    }

    fn param_name(&mut self, idx: usize) {
        let (layer, suffix) = self.param_layer_suffix(idx);
        self.s("linear_");
        self.uint(layer);
        self.s(suffix);
    }

    fn master_name(&mut self, idx: usize) {
        self.param_name(idx);
        self.s("_fp32_master_0");
    }

    /// Accumulators hang off the master weight when there is one.
    fn acc_name(&mut self, idx: usize, suffix: &str) {
        if self.bf16() {
            self.master_name(idx);
        } else {
            self.param_name(idx);
        }
        self.s(suffix);
    }

    fn lr_name(&mut self) {
        self.s("learning_rate_");
        self.uint(self.o.lr_index as u64);
    }

    fn struct_name(&mut self, layer: usize) {
        self.s("struct_name:\"/Linear");
        let k = self.o.first_layer_index.saturating_add(layer);
        if k > 0 {
            self.out.push('_');
            self.uint(k as u64);
        }
        self.s("/\"");
    }

    fn acc_ty(&self, idx: usize, scalar_shape: bool) -> Ty {
        if scalar_shape {
            Ty::vec(1, Elem::F32)
        } else {
            self.param_ty(idx).with_elem(Elem::F32)
        }
    }

    // ---- main program -----------------------------------------------------------------------

    fn main(&mut self) {
        self.next = 0;
        self.s("{\n");
        let lr = self.globals();
        let x = self.data_input("x", self.o.in_features.get());
        let y = self.data_input("y", self.o.out_features.get());
        let fwd = self.forward(x, y);
        self.backward(x, y, &fwd);
        self.optimize(lr);
        self.s("}\n");
    }

    /// Persistable inputs of main: optimizer accumulators, learning rate, master weights,
    /// parameters. Returns the learning rate's id.
    fn globals(&mut self) -> u64 {
        let accs = accumulators(self.o.optimizer);
        // Inserted one by one at the start of main, so they print in reverse creation order:
        // parameters in reverse update order (creation order without loss scaling),
        // accumulators of each in reverse.
        for idx in self.update_order().into_iter().rev() {
            for (k, &(suffix, scalar, _)) in accs.iter().enumerate().rev() {
                let t = self.acc_ty(idx, scalar);
                let id = self.begin(1, "pd_op.data");
                self.operands(&[]);
                self.s("dtype:float32,name:\"");
                self.acc_name(idx, suffix);
                self.s("\",");
                self.persistable_data_tail(t);
                self.params[idx].accs[k] = id;
            }
        }
        let lr_ty = Ty::scalar(self.pe);
        let lr = self.begin(1, "pd_op.data");
        self.operands(&[]);
        self.s("dtype:");
        self.s(self.pe.attr_name());
        self.s(",name:\"");
        self.lr_name();
        self.s("\",");
        self.persistable_data_tail(lr_ty);
        if self.amp_on() {
            // Created before the learning rate (by the AMP decorator, before backward), so
            // printed after it, in reverse creation order.
            for (k, (name, elem)) in AMP_STATE.iter().enumerate().rev() {
                let id = self.begin(1, "pd_op.data");
                self.operands(&[]);
                self.s("dtype:");
                self.s(elem.attr_name());
                self.s(",name:\"");
                self.s(name);
                self.s("\",");
                self.persistable_data_tail(Ty::vec(1, *elem));
                self.amp[k] = id;
            }
        }
        if self.bf16() {
            for idx in self.opt_order() {
                let t = self.param_ty(idx).with_elem(Elem::F32);
                let id = self.begin(1, "pd_op.data");
                self.operands(&[]);
                self.s("dtype:float32,name:\"");
                self.master_name(idx);
                self.s("\",");
                self.persistable_data_tail(t);
                self.params[idx].master = id;
            }
        }
        for idx in self.opt_order() {
            let t = self.param_ty(idx);
            let id = self.begin(1, "builtin.parameter");
            self.operands(&[]);
            self.s("is_distributed:[false],is_parameter:[true],need_clip:[true],");
            self.role(0);
            self.s("parameter_name:\"");
            self.param_name(idx);
            self.s("\",persistable:[true],stop_gradient:[false],trainable:[true]");
            self.signature(&[], &[Some(t)]);
            self.params[idx].value = id;
        }
        lr
    }

    /// The attributes after `name` of a persistable `pd_op.data`, and its signature.
    fn persistable_data_tail(&mut self, t: Ty) {
        self.role(0);
        self.s("persistable:[true],place:Place(undefined:0),shape:");
        self.dims_attr(t.dims());
        self.s(",stop_gradient:[true]");
        self.signature(&[], &[Some(t)]);
    }

    /// A feed (`x` or `y`): a batch of `width`-wide rows.
    fn data_input(&mut self, name: &str, width: usize) -> u64 {
        let t = Ty::act(width, self.pe);
        let id = self.begin(1, "pd_op.data");
        self.operands(&[]);
        self.s("dtype:");
        self.s(self.pe.attr_name());
        self.s(",name:\"");
        self.s(name);
        self.s("\",");
        self.role(0);
        self.s("place:Place(undefined:0),shape:");
        self.dims_attr(t.dims());
        self.s(",stop_gradient:[true]");
        self.signature(&[], &[Some(t)]);
        id
    }

    fn forward(&mut self, x: u64, y: u64) -> Forward {
        let pe = self.pe;
        let mut fwd = Forward {
            matmul: Vec::with_capacity(self.layers),
            relu: Vec::with_capacity(self.layers),
            ..Forward::default()
        };
        let mut input = x;
        let mut add = x;
        for layer in 0..self.layers {
            let (fi, fo) = (self.fan_in(layer), self.fan_out(layer));
            let (w, b) = (
                self.params[2 * layer].value,
                self.params[2 * layer + 1].value,
            );
            let mm = self.begin(1, "pd_op.matmul");
            self.operands(&[Some(input), Some(w)]);
            self.role(0);
            self.s("stop_gradient:[false],");
            self.struct_name(layer);
            self.s(",transpose_x:false,transpose_y:false");
            self.signature(
                &[Some(Ty::act(fi, pe)), Some(Ty::mat(dim(fi), fo, pe))],
                &[Some(Ty::act(fo, pe))],
            );
            add = self.begin(1, "pd_op.add");
            self.operands(&[Some(mm), Some(b)]);
            self.role(0);
            self.s("stop_gradient:[false],");
            self.struct_name(layer);
            self.signature(
                &[Some(Ty::act(fo, pe)), Some(Ty::vec(fo, pe))],
                &[Some(Ty::act(fo, pe))],
            );
            fwd.matmul.push(mm);
            if layer + 1 < self.layers {
                let t = Ty::act(fo, pe);
                let relu = self.begin(1, "pd_op.relu");
                self.operands(&[Some(add)]);
                self.role(0);
                self.s("stop_gradient:[false]");
                self.signature(&[Some(t)], &[Some(t)]);
                fwd.relu.push(relu);
                input = relu;
            }
        }
        fwd.last_add = add;

        let out_ty = Ty::act(self.o.out_features.get(), pe);
        let scalar = Ty::scalar(pe);
        let int_array = Ty::vec(0, Elem::I64);
        fwd.sub = self.begin(1, "pd_op.subtract");
        self.operands(&[Some(add), Some(y)]);
        self.role(0);
        self.s("stop_gradient:[false]");
        self.signature(&[Some(out_ty), Some(out_ty)], &[Some(out_ty)]);

        fwd.two = self.begin(1, "pd_op.full");
        self.operands(&[]);
        self.s("dtype:");
        self.s(pe.attr_name());
        self.out.push(',');
        self.role(0);
        self.s("place:Place(undefined:0),shape:[],stop_gradient:[true],value:2");
        self.signature(&[], &[Some(scalar)]);

        fwd.pow = self.begin(1, "pd_op.elementwise_pow");
        self.operands(&[Some(fwd.sub), Some(fwd.two)]);
        self.role(0);
        self.s("stop_gradient:[false]");
        self.signature(&[Some(out_ty), Some(scalar)], &[Some(out_ty)]);

        fwd.axes = self.begin(1, "pd_op.full_int_array");
        self.operands(&[]);
        self.s("dtype:int64,");
        self.role(0);
        self.s("place:Place(cpu),stop_gradient:[true],value:[]");
        self.signature(&[], &[Some(int_array)]);

        fwd.mean = self.begin(1, "pd_op.mean");
        self.operands(&[Some(fwd.pow), Some(fwd.axes)]);
        self.s("keepdim:false,");
        self.role(0);
        self.s("stop_gradient:[false]");
        self.signature(&[Some(out_ty), Some(int_array)], &[Some(scalar)]);
        fwd.loss = fwd.mean;
        if self.amp_on() {
            fwd.loss = self.begin(1, "pd_op.multiply");
            self.operands(&[Some(fwd.mean), Some(self.amp[0])]);
            self.role(0);
            self.s("stop_gradient:[false]");
            let one = Ty::vec(1, Elem::F32);
            self.signature(&[Some(scalar), Some(one)], &[Some(one)]);
        }
        fwd
    }

    fn backward(&mut self, x: u64, y: u64, fwd: &Forward) {
        let pe = self.pe;
        let out_ty = Ty::act(self.o.out_features.get(), pe);
        let scalar = Ty::scalar(pe);
        let one_ty = Ty::vec(1, Elem::F32);
        let int_array = Ty::vec(0, Elem::I64);

        let one = self.begin(1, "pd_op.full");
        self.operands(&[]);
        self.s("dtype:float32,");
        self.role(1);
        self.s("place:Place(cpu),shape:[1],stop_gradient:[true],value:1");
        self.signature(&[], &[Some(one_ty)]);

        // The loss's type: the mean's, or `[1]` once multiplied by the loss scale.
        let loss_ty = if self.amp_on() { one_ty } else { scalar };
        let mut seed = self.begin(1, "pd_op.full_like");
        self.operands(&[Some(fwd.loss), Some(one)]);
        self.s("dtype:");
        self.s(pe.attr_name());
        self.out.push(',');
        self.role(1);
        self.s("place:Place(undefined:0),");
        self.backward_stop_gradient(1);
        self.signature(&[Some(loss_ty), Some(one_ty)], &[Some(loss_ty)]);
        if self.amp_on() {
            let g = self.begin(2, "pd_op.multiply_grad");
            self.operands(&[Some(fwd.mean), Some(self.amp[0]), Some(seed)]);
            self.s("axis:-1,");
            self.role(1);
            self.backward_stop_gradient(2);
            self.signature(
                &[Some(scalar), Some(one_ty), Some(one_ty)],
                &[Some(scalar), None],
            );
            seed = g;
        }

        let mean_grad = self.begin(1, "pd_op.mean_grad");
        self.operands(&[Some(fwd.pow), Some(seed), Some(fwd.axes)]);
        self.s("keepdim:false,");
        self.role(1);
        self.s("reduce_all:false,");
        self.backward_stop_gradient(1);
        self.signature(
            &[Some(out_ty), Some(scalar), Some(int_array)],
            &[Some(out_ty)],
        );

        let pow_grad = self.begin(2, "pd_op.elementwise_pow_grad");
        self.operands(&[Some(fwd.sub), Some(fwd.two), Some(mean_grad)]);
        self.role(1);
        self.backward_stop_gradient(2);
        self.signature(
            &[Some(out_ty), Some(scalar), Some(out_ty)],
            &[Some(out_ty), None],
        );

        let sub_grad = self.begin(2, "pd_op.subtract_grad");
        self.operands(&[Some(fwd.last_add), Some(y), Some(pow_grad)]);
        self.s("axis:-1,");
        self.role(1);
        self.backward_stop_gradient(2);
        self.signature(
            &[Some(out_ty), Some(out_ty), Some(out_ty)],
            &[Some(out_ty), None],
        );

        let mut upstream = sub_grad;
        for layer in (0..self.layers).rev() {
            let (fi, fo) = (self.fan_in(layer), self.fan_out(layer));
            let (wi, bi) = (2 * layer, 2 * layer + 1);
            let (w, b) = (self.params[wi].value, self.params[bi].value);
            let (act_in, act_out) = (Ty::act(fi, pe), Ty::act(fo, pe));
            let (w_ty, b_ty) = (Ty::mat(dim(fi), fo, pe), Ty::vec(fo, pe));

            let add_grad = self.begin(2, "pd_op.add_grad");
            self.operands(&[Some(fwd.matmul[layer]), Some(b), Some(upstream)]);
            self.s("axis:-1,");
            self.role(1);
            self.backward_stop_gradient(2);
            self.signature(
                &[Some(act_out), Some(b_ty), Some(act_out)],
                &[Some(act_out), Some(b_ty)],
            );
            self.params[bi].grad = self.maybe_allreduce(add_grad + 1, b_ty);

            let input = if layer == 0 { x } else { fwd.relu[layer - 1] };
            let matmul_grad = self.begin(2, "pd_op.matmul_grad");
            self.operands(&[Some(input), Some(w), Some(add_grad)]);
            self.role(1);
            self.backward_stop_gradient(2);
            self.s(",transpose_x:false,transpose_y:false");
            // The input `x` needs no gradient: the first layer's x-grad is absent.
            let x_grad = (layer > 0).then_some(act_in);
            self.signature(
                &[Some(act_in), Some(w_ty), Some(act_out)],
                &[x_grad, Some(w_ty)],
            );
            self.params[wi].grad = self.maybe_allreduce(matmul_grad + 1, w_ty);

            if layer > 0 {
                let relu_grad = self.begin(1, "pd_op.relu_grad");
                self.operands(&[Some(fwd.relu[layer - 1]), Some(matmul_grad)]);
                self.role(1);
                self.backward_stop_gradient(1);
                self.signature(&[Some(act_in), Some(act_in)], &[Some(act_in)]);
                upstream = relu_grad;
            }
        }
    }

    /// With `allreduce`, sums gradient `grad` over the data-parallel ranks and returns the sum;
    /// otherwise returns `grad`.
    fn maybe_allreduce(&mut self, grad: u64, t: Ty) -> u64 {
        if !self.o.allreduce {
            return grad;
        }
        let id = match self.o.collective {
            Collective::CAllreduceSum => {
                let id = self.begin(1, "pd_op.c_allreduce_sum");
                self.operands(&[Some(grad)]);
                self.role(1);
                self.s("ring_id:0,");
                self.backward_stop_gradient(1);
                self.s(",use_calc_stream:true,use_model_parallel:false");
                id
            }
            Collective::AllReduce => {
                let id = self.begin(1, "pd_op.all_reduce");
                self.operands(&[Some(grad)]);
                self.role(1);
                self.s("reduce_type:0,ring_id:0,");
                self.backward_stop_gradient(1);
                id
            }
        };
        self.signature(&[Some(t)], &[Some(t)]);
        id
    }

    fn optimize(&mut self, lr: u64) {
        if self.bf16() {
            // Master gradients: every gradient is cast to f32 before any optimizer op.
            for idx in self.opt_order() {
                let t = self.param_ty(idx);
                let grad = self.params[idx].grad;
                let id = self.begin(1, "pd_op.cast");
                self.operands(&[Some(grad)]);
                self.s("dtype:float32,master_grad_cast:true,");
                self.role(2);
                self.s("stop_gradient:[false]");
                self.signature(&[Some(t)], &[Some(t.with_elem(Elem::F32))]);
                self.params[idx].grad = id;
            }
        }
        if self.amp_on() {
            self.loss_scaling_ops();
        }
        for idx in self.update_order() {
            match self.o.optimizer {
                Optimizer::Sgd => self.sgd(idx, lr),
                Optimizer::Momentum => self.momentum(idx, lr),
                Optimizer::Adam | Optimizer::AdamW => self.adam(idx, lr),
            }
        }
    }

    /// `check_finite_and_unscale_` and `update_loss_scaling_` on every gradient (optimizer
    /// order), each on a `builtin.combine` of them and followed by the `builtin.split` Paddle
    /// prints for its vector result. The optimizers read the gradients themselves, which both
    /// ops write in place.
    fn loss_scaling_ops(&mut self) {
        let grads: Vec<Slot> = self
            .opt_order()
            .map(|i| Some(self.params[i].grad))
            .collect();
        let types: Vec<Option<Ty>> = self.opt_order().map(|i| Some(self.param_ty(i))).collect();
        let n = grads.len();
        let one = Ty::vec(1, Elem::F32);
        let (flag, count) = (Ty::vec(1, Elem::Bool), Ty::vec(1, Elem::I32));
        let [scale, good, bad] = self.amp;
        let combine = |g: &mut Self| {
            let id = g.begin(1, "builtin.combine");
            g.operands(&grads);
            g.role(2);
            g.s("stop_gradient:[false]} : (");
            g.ty_list(&types);
            g.s(") -> ");
            g.vec_ty(&types);
            g.out.push('\n');
            id
        };
        let split = |g: &mut Self, v: u64| {
            g.begin(n, "builtin.split");
            g.operands(&[Some(v)]);
            g.role(2);
            g.stop_gradient(&vec![false; n]);
            g.s("} : (");
            g.vec_ty(&types);
            g.s(") -> ");
            g.ty_list(&types);
            g.out.push('\n');
        };
        let c = combine(self);
        let check = self.begin(2, "pd_op.check_finite_and_unscale_");
        self.operands(&[Some(c), Some(scale)]);
        self.role(2);
        self.s("stop_gradient:[false,false]} : (");
        self.vec_ty(&types);
        self.s(", ");
        self.ty(one);
        self.s(") -> ");
        self.vec_ty(&types);
        self.s(", ");
        self.ty(flag);
        self.out.push('\n');
        split(self, check);
        let stop = self.begin(1, "pd_op.full");
        self.operands(&[]);
        self.s("dtype:bool,");
        self.role(2);
        self.s("place:Place(cpu),shape:[1],stop_gradient:[true],value:0");
        self.signature(&[], &[Some(flag)]);
        let c = combine(self);
        let update = self.begin(4, "pd_op.update_loss_scaling_");
        self.operands(&[
            Some(c),
            Some(check + 1),
            Some(scale),
            Some(good),
            Some(bad),
            Some(stop),
        ]);
        self.s("decr_every_n_nan_or_inf:2,decr_ratio:0.8,incr_every_n_steps:1000,incr_ratio:2,");
        self.role(2);
        self.s("stop_gradient:[false,false,false,false]} : (");
        self.vec_ty(&types);
        self.s(", ");
        self.ty_list(&[Some(flag), Some(one), Some(count), Some(count), Some(flag)]);
        self.s(") -> ");
        self.vec_ty(&types);
        self.s(", ");
        self.ty_list(&[Some(one), Some(count), Some(count)]);
        self.out.push('\n');
        split(self, update);
    }

    /// `vec[t1,t2,...]`, a vector's type.
    fn vec_ty(&mut self, types: &[Option<Ty>]) {
        self.s("vec[");
        for (k, t) in types.iter().enumerate() {
            if k > 0 {
                self.out.push(',');
            }
            if let Some(t) = t {
                self.ty(*t);
            }
        }
        self.out.push(']');
    }

    /// The master weight slot of an optimizer op: the master with bf16, absent otherwise.
    fn master_slot(&self, idx: usize) -> (Slot, Option<Ty>) {
        if self.bf16() {
            let t = self.param_ty(idx).with_elem(Elem::F32);
            (Some(self.params[idx].master), Some(t))
        } else {
            (None, None)
        }
    }

    /// Type of the gradient the optimizer reads: f32 after a master-grad cast.
    fn opt_grad_ty(&self, idx: usize) -> Ty {
        if self.bf16() {
            self.param_ty(idx).with_elem(Elem::F32)
        } else {
            self.param_ty(idx)
        }
    }

    fn multi_precision(&mut self) {
        self.s(if self.bf16() {
            "multi_precision:true,"
        } else {
            "multi_precision:false,"
        });
    }

    fn sgd(&mut self, idx: usize, lr: u64) {
        let p = self.params[idx];
        let t = self.param_ty(idx);
        let (master, master_ty) = self.master_slot(idx);
        self.begin(2, "pd_op.sgd_");
        self.operands(&[Some(p.value), Some(lr), Some(p.grad), master]);
        self.multi_precision();
        self.role(2);
        self.stop_gradient(&[true, self.bf16()]);
        self.signature(
            &[
                Some(t),
                Some(Ty::scalar(self.pe)),
                Some(self.opt_grad_ty(idx)),
                master_ty,
            ],
            &[Some(t), master_ty],
        );
    }

    fn momentum(&mut self, idx: usize, lr: u64) {
        let p = self.params[idx];
        let t = self.param_ty(idx);
        let acc_ty = self.acc_ty(idx, false);
        let (master, master_ty) = self.master_slot(idx);
        self.begin(3, "pd_op.momentum_");
        self.operands(&[
            Some(p.value),
            Some(p.grad),
            Some(p.accs[0]),
            Some(lr),
            master,
        ]);
        self.s("mu:0.9,");
        self.multi_precision();
        self.role(2);
        self.s("regularization_coeff:0,regularization_method:\"\",rescale_grad:1,");
        self.stop_gradient(&[false; 3]);
        self.s(",use_nesterov:false");
        self.signature(
            &[
                Some(t),
                Some(self.opt_grad_ty(idx)),
                Some(acc_ty),
                Some(Ty::scalar(self.pe)),
                master_ty,
            ],
            &[Some(t), Some(acc_ty), master_ty],
        );
    }

    fn adam(&mut self, idx: usize, lr: u64) {
        let one_ty = Ty::vec(1, Elem::F32);
        let mut hyper = [0u64; 3];
        for (h, &v) in hyper.iter_mut().zip(ADAM_HYPER.iter()) {
            *h = self.begin(1, "pd_op.full");
            self.operands(&[]);
            self.s("dtype:float32,");
            self.role(2);
            self.s("place:Place(cpu),shape:[1],stop_gradient:[true],value:");
            self.g(v);
            self.signature(&[], &[Some(one_ty)]);
        }
        let p = self.params[idx];
        let t = self.param_ty(idx);
        let moment_ty = self.acc_ty(idx, false);
        let (master, master_ty) = self.master_slot(idx);
        let adamw = self.o.optimizer == Optimizer::AdamW;
        self.begin(7, if adamw { "pd_op.adamw_" } else { "pd_op.adam_" });
        self.operands(&[
            Some(p.value),
            Some(p.grad),
            Some(lr),
            Some(p.accs[0]),
            Some(p.accs[1]),
            None,
            Some(p.accs[2]),
            Some(p.accs[3]),
            master,
            None,
            Some(hyper[0]),
            Some(hyper[1]),
            Some(hyper[2]),
        ]);
        self.s("amsgrad:false,");
        if adamw {
            self.s("coeff:0.01,");
        }
        self.s("lazy_mode:false,");
        if adamw {
            self.s("lr_ratio:1,");
        }
        self.s("min_row_size_to_use_multithread:1000,");
        self.multi_precision();
        self.role(2);
        self.stop_gradient(&[false; 7]);
        self.s(",use_global_beta_pow:false");
        if adamw {
            self.s(",with_decay:true");
        }
        self.signature(
            &[
                Some(t),
                Some(self.opt_grad_ty(idx)),
                Some(Ty::scalar(self.pe)),
                Some(moment_ty),
                Some(moment_ty),
                None,
                Some(one_ty),
                Some(one_ty),
                master_ty,
                None,
                Some(one_ty),
                Some(one_ty),
                Some(one_ty),
            ],
            &[
                Some(t),
                Some(moment_ty),
                Some(moment_ty),
                None,
                Some(one_ty),
                Some(one_ty),
                master_ty,
            ],
        );
    }

    // ---- startup program --------------------------------------------------------------------

    fn startup(&mut self) {
        self.next = 0;
        let pe = self.pe;
        let one_ty = Ty::vec(1, Elem::F32);
        for layer in 0..self.layers {
            let (fi, fo) = (self.fan_in(layer), self.fan_out(layer));
            let w_ty = Ty::mat(dim(fi), fo, pe);
            let shape_ty = Ty::vec(2, Elem::I64);
            let shape = self.begin(1, "pd_op.full_int_array");
            self.operands(&[]);
            self.s("dtype:int64,place:Place(cpu),stop_gradient:[true],value:");
            self.dims_attr(w_ty.dims());
            self.signature(&[], &[Some(shape_ty)]);
            let mut bound = [0u64; 2];
            for (k, b) in bound.iter_mut().enumerate() {
                *b = self.begin(1, "pd_op.full");
                self.operands(&[]);
                self.s("dtype:float32,place:Place(cpu),shape:[1],stop_gradient:[true],value:");
                if k == 0 {
                    self.out.push('-');
                }
                self.xavier_bound(fi, fo);
                self.signature(&[], &[Some(one_ty)]);
            }
            let w = self.begin(1, "pd_op.uniform");
            self.operands(&[Some(shape), Some(bound[0]), Some(bound[1])]);
            self.s("dtype:");
            self.s(pe.attr_name());
            self.s(",persistable:[true],place:Place(undefined:0),seed:0,stop_gradient:[true]");
            self.signature(&[Some(shape_ty), Some(one_ty), Some(one_ty)], &[Some(w_ty)]);
            self.set_parameter(w, 2 * layer, w_ty);

            let b_ty = Ty::vec(fo, pe);
            let b = self.persistable_full(b_ty, 0.0);
            self.set_parameter(b, 2 * layer + 1, b_ty);
            self.params[2 * layer].init = w;
            self.params[2 * layer + 1].init = b;
        }

        if self.amp_on() {
            for (name, elem) in AMP_STATE {
                let t = Ty::vec(1, elem);
                let v = self.persistable_full(t, if elem == Elem::F32 { LOSS_SCALE } else { 0.0 });
                self.shadow_output_begin(v);
                self.s(name);
                self.shadow_output_end(t);
            }
        }
        let lr_ty = Ty::scalar(pe);
        let lr = self.persistable_full(lr_ty, self.o.lr_value());
        self.shadow_output_begin(lr);
        self.lr_name();
        self.shadow_output_end(lr_ty);

        let accs = accumulators(self.o.optimizer);
        for idx in self.update_order() {
            if self.bf16() {
                let t = self.param_ty(idx);
                let master_ty = t.with_elem(Elem::F32);
                let init = self.params[idx].init;
                let master = self.begin(1, "pd_op.cast");
                self.operands(&[Some(init)]);
                self.s("dtype:float32,persistable:[true],stop_gradient:[true]");
                self.signature(&[Some(t)], &[Some(master_ty)]);
                self.shadow_output_begin(master);
                self.master_name(idx);
                self.shadow_output_end(master_ty);
            }
            for &(suffix, scalar, fill) in accs {
                let t = self.acc_ty(idx, scalar);
                let acc = self.persistable_full(t, fill);
                self.shadow_output_begin(acc);
                self.acc_name(idx, suffix);
                self.shadow_output_end(t);
            }
        }
    }

    /// `sqrt(6 / (fan_in + fan_out))`, the Xavier-uniform bound. Paddle computes it in Python
    /// floats (f64) and hands it to `uniform` as a Scalar, which keeps the double; the printer
    /// rounds it to 6 significant digits.
    fn xavier_bound(&mut self, fan_in: usize, fan_out: usize) {
        self.g((6.0 / (fan_in as f64 + fan_out as f64)).sqrt());
    }

    /// A persistable `pd_op.full` of type `t` filled with `value`.
    fn persistable_full(&mut self, t: Ty, value: f64) -> u64 {
        let id = self.begin(1, "pd_op.full");
        self.operands(&[]);
        self.s("dtype:");
        self.s(t.elem.attr_name());
        self.s(",persistable:[true],place:Place(undefined:0),shape:");
        self.dims_attr(t.dims());
        self.s(",stop_gradient:[true],value:");
        self.g(value);
        self.signature(&[], &[Some(t)]);
        id
    }

    fn set_parameter(&mut self, value: u64, idx: usize, t: Ty) {
        self.begin(0, "builtin.set_parameter");
        self.operands(&[Some(value)]);
        self.s("parameter_name:\"");
        self.param_name(idx);
        self.s("\"");
        self.signature(&[Some(t)], &[]);
    }

    /// `builtin.shadow_output` up to the opening quote of its name; the caller writes the name.
    fn shadow_output_begin(&mut self, value: u64) {
        self.begin(0, "builtin.shadow_output");
        self.operands(&[Some(value)]);
        self.s("output_name:\"");
    }

    fn shadow_output_end(&mut self, t: Ty) {
        self.s("\"");
        self.signature(&[Some(t)], &[]);
    }
}

/// Forward-pass ids the backward pass reads.
#[derive(Debug, Default)]
struct Forward {
    /// `matmul` result per layer.
    matmul: Vec<u64>,
    /// `relu` result per layer but the last.
    relu: Vec<u64>,
    /// The last layer's `add` (the model output).
    last_add: u64,
    sub: u64,
    two: u64,
    pow: u64,
    axes: u64,
    mean: u64,
    /// What backward is seeded from: the mean, or the mean times the loss scale.
    loss: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The output is allocated once: had the string grown, its capacity would differ from the
    /// estimate (growth doubles it).
    #[test]
    fn output_is_allocated_once() {
        for n in [3, 10, 997, 3_001] {
            for optimizer in Optimizer::ALL {
                for dtype in Dtype::ALL {
                    let opts = MlpOptions {
                        optimizer,
                        dtype,
                        allreduce: n % 2 == 1,
                        collective: if n % 4 == 3 {
                            Collective::AllReduce
                        } else {
                            Collective::CAllreduceSum
                        },
                        first_layer_index: n,
                        ..MlpOptions::with_layers(nz(n))
                    };
                    let out = mlp(&opts);
                    assert_eq!(out.capacity(), estimate_len(&opts), "{opts:?}");
                    // And, on programs big enough to matter, not wildly over.
                    if n > 100 {
                        assert!(out.capacity() < out.len() + out.len() / 10, "{opts:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn names_round_trip() {
        for o in Optimizer::ALL {
            assert_eq!(o.name().parse::<Optimizer>(), Ok(o));
        }
        for d in Dtype::ALL {
            assert_eq!(d.to_string().parse::<Dtype>(), Ok(d));
        }
        assert_eq!("AdamW".parse::<Optimizer>(), Ok(Optimizer::AdamW));
        assert!("lamb".parse::<Optimizer>().is_err());
        assert!("f16".parse::<Dtype>().is_err());
        for c in Collective::ALL {
            assert_eq!(c.name().parse::<Collective>(), Ok(c));
        }
        assert_eq!(
            "pd_op.all_reduce".parse::<Collective>(),
            Ok(Collective::AllReduce)
        );
        assert!("c_allreduce_avg".parse::<Collective>().is_err());
    }
}
