//! The IR's verifier with the dialect table's op counts, and the checks of a program against
//! the op definitions that are findings rather than hard errors.
//!
//! The verifier lives in the IR and knows no op table ([`crate::ir::OpCounts`]); the dialect sits
//! above the IR and hands its table in. [`verify_module`] and [`verify_program`] are what every
//! caller wants: the IR's verifier checking counts against [`Dialect`].
//!
//! [`findings_beyond`] compares each op with its definition: attribute values that do not fit the
//! definition's type, attributes the definition has and the op lacks, and unknown ops named
//! like a known one (`pd_op.sdg_`: did you mean `pd_op.sgd_`?). Paddle's own programs sometimes
//! disagree with Paddle's definitions, so the command line reports findings in its input as
//! warnings, and fails a rewrite only for a misfit the input did not have ([`misfit_ops`]):
//! those are irw's.

use super::data::{AttrType, ScalarType};
use super::paddle_json::DTYPE_NAMES;
use super::{AttrSpec, Dialect, OpSpec};
use crate::ir::{verify, Attr, Context, Module, OpCounts, OpId, Program, VerifyError, Which};
use rustc_hash::{FxHashMap, FxHashSet};

impl OpCounts for Dialect {
    fn check_counts(&self, name: &str, operands: usize, results: usize) -> Result<(), String> {
        let Some(spec) = self.spec(name) else {
            return Ok(());
        };
        if !OpSpec::count_fits(spec.operands, operands) {
            return Err(format!(
                "has {} operands; the dialect table says {:?}",
                operands, spec.operands
            ));
        }
        if !OpSpec::count_fits(spec.results, results) {
            return Err(format!(
                "has {} results; the dialect table says {:?}",
                results, spec.results
            ));
        }
        Ok(())
    }

    fn buffer_results(&self, name: &str) -> Vec<(usize, usize)> {
        self.spec(name)
            .map_or_else(Vec::new, |s| s.buffer_results().collect())
    }

    fn operand_check(&self, name: &str) -> Option<crate::ir::OperandCheck> {
        use super::shape_family::{operands_misfit, ProgramOp, Shape};
        fn matmul(ctx: &Context, prog: &Program, op: OpId) -> Option<String> {
            operands_misfit(Shape::Matmul, &ProgramOp { ctx, prog, op })
        }
        fn gemm(ctx: &Context, prog: &Program, op: OpId) -> Option<String> {
            operands_misfit(Shape::FusedGemmEpilogue, &ProgramOp { ctx, prog, op })
        }
        fn full(ctx: &Context, prog: &Program, op: OpId) -> Option<String> {
            operands_misfit(Shape::Full, &ProgramOp { ctx, prog, op })
        }
        match self.spec(name)?.shape {
            Shape::Matmul => Some(matmul),
            Shape::FusedGemmEpilogue => Some(gemm),
            Shape::Full => Some(full),
            _ => None,
        }
    }

    fn operand_ranks(&self, name: &str) -> Vec<verify::OperandRanks> {
        let Some(s) = self.spec(name) else {
            return Vec::new();
        };
        let names: Vec<&'static str> = s.operand_names().collect();
        (s.ranks.iter())
            .map(|&(o, lowest, highest)| verify::OperandRanks {
                operand: (o as usize, names[o as usize]),
                lowest: lowest as usize,
                highest: highest as usize,
            })
            .collect()
    }

    fn same_shape(&self, name: &str) -> Vec<verify::SameShape> {
        let Some(s) = self.spec(name) else {
            return Vec::new();
        };
        let names: Vec<&'static str> = s.operand_names().collect();
        (s.same_shape.iter())
            .map(|&(a, b)| verify::SameShape {
                operand: (a as usize, names[a as usize]),
                like: (b as usize, names[b as usize]),
            })
            .collect()
    }
}

/// Verifies both programs of a module against the dialect table (`verify::verify_module`).
pub fn verify_module(m: &Module) -> Result<(), VerifyError> {
    verify::verify_module(m, Dialect::get())
}

/// Verifies one program against the dialect table ([`verify::verify_program`]).
pub fn verify_program(ctx: &Context, p: &Program) -> Result<(), (Option<OpId>, String)> {
    verify::verify_program(ctx, p, Dialect::get())
}

/// One finding: where, and what (a phrase after the op's name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub which: Which,
    pub op: OpId,
    pub kind: FindingKind,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindingKind {
    /// An attribute value that does not fit the definition's type.
    Misfit,
    /// An attribute of the definition the op lacks.
    Missing,
    /// An unknown op named like a known one.
    Typo,
}

/// Whether `a` is a value of type `t` as Paddle prints it (floats may print as integers).
pub fn fits(a: &Attr, t: AttrType) -> bool {
    fn scalar(a: &Attr, s: ScalarType) -> bool {
        match (s, a) {
            (ScalarType::Any, _) => !matches!(a, Attr::Array(_) | Attr::Dict(_) | Attr::OpDist(_)),
            (ScalarType::Bool, Attr::Bool(_)) => true,
            (ScalarType::I32, Attr::Int(i)) => i32::try_from(*i).is_ok(),
            (ScalarType::I64, Attr::Int(_)) => true,
            (ScalarType::F32 | ScalarType::F64, Attr::Int(_) | Attr::Float { .. }) => true,
            (ScalarType::Str, Attr::Str(_)) => true,
            _ => false,
        }
    }
    match t {
        AttrType::Bool => scalar(a, ScalarType::Bool),
        AttrType::I32 => scalar(a, ScalarType::I32),
        AttrType::I64 => scalar(a, ScalarType::I64),
        AttrType::F32 => scalar(a, ScalarType::F32),
        AttrType::F64 => scalar(a, ScalarType::F64),
        AttrType::Str => scalar(a, ScalarType::Str),
        AttrType::Scalar(s) => scalar(a, s),
        AttrType::DType => a
            .as_word()
            .is_some_and(|w| DTYPE_NAMES.iter().any(|(_, p)| *p == w)),
        AttrType::Place => a.as_word().is_some_and(|w| w.starts_with("Place(")),
        AttrType::IntArray => a
            .as_array()
            .is_some_and(|v| v.iter().all(|x| matches!(x, Attr::Int(_)))),
        AttrType::Array(s) => a.as_array().is_some_and(|v| v.iter().all(|x| scalar(x, s))),
    }
}

/// Pairs of an op name and an attribute dictionary: an op's attribute misfits depend on
/// nothing else.
pub type NameAndAttrs = FxHashSet<(crate::ir::Sym, crate::ir::AttrId)>;

/// The findings of both programs, in program order, of the ops whose name and dictionary are
/// not in `fitting` (pairs known to have no misfit: such ops are not looked at), and every pair
/// of `m` met without a misfit. A rewrite's result is checked for new misfits with the pairs of
/// its input: only the ops the rewrite made or changed are looked at.
pub fn findings_beyond(m: &Module, fitting: &NameAndAttrs) -> (Vec<Finding>, NameAndAttrs) {
    let mut out = Vec::new();
    let mut fitting_here = NameAndAttrs::default();
    let mut typos: FxHashMap<&str, Option<String>> = FxHashMap::default();
    // Op names are interned: one table lookup per distinct name.
    let mut specs: FxHashMap<crate::ir::Sym, Option<&'static OpSpec>> = FxHashMap::default();
    // An op's findings depend only on its name and its (interned) dictionary, and ops share
    // both: a pair that gave no finding is not checked again.
    let mut clean: FxHashSet<(crate::ir::Sym, crate::ir::AttrId)> = FxHashSet::default();
    // By dictionary id: 1 + the name of a pair known to need no look (clean, or in `fitting`),
    // 0 for none. Most dictionaries are used by one op name, so most ops are passed over by
    // this array without a probe of either set.
    let mut skip: Vec<u32> = vec![0; m.ctx.interned_counts().1];
    let progs = std::iter::once((Which::Main, &m.main))
        .chain(m.startup.as_ref().map(|s| (Which::Startup, s)));
    for (which, p) in progs {
        for op in p.walk() {
            let sym = p.op_name(op);
            let name = m.ctx.str(sym);
            let spec = *specs
                .entry(sym)
                .or_insert_with(|| Dialect::get().spec(name));
            let attr_id = p.op_attrs(op);
            if spec.is_some_and(|s| s.attrs.is_empty()) {
                continue;
            }
            let d = attr_id.0 as usize;
            if skip[d] == sym.0 + 1 {
                continue;
            }
            if clean.contains(&(sym, attr_id)) || fitting.contains(&(sym, attr_id)) {
                skip[d] = sym.0 + 1;
                continue;
            }
            let found_before = out.len();
            let mut push = |kind, message| {
                out.push(Finding {
                    which,
                    op,
                    kind,
                    message,
                })
            };
            let Some(spec) = spec else {
                let hint = typos.entry(name).or_insert_with(|| typo_hint(name));
                if let Some(h) = hint {
                    push(FindingKind::Typo, h.clone());
                }
                continue;
            };
            let attrs = m.ctx.attrs(attr_id);
            for a in spec.attrs {
                match attrs.get(a.name) {
                    Some(v) if !fits(v, a.ty) => push(
                        FindingKind::Misfit,
                        format!(
                            "has attribute `{}:{}`, but Paddle's definition types it {}",
                            a.name,
                            v.to_text(),
                            a.ty.describe()
                        ),
                    ),
                    Some(_) => {}
                    None => {
                        let mut message = missing_message(a);
                        // An attribute outside the definition named like the missing one is
                        // most likely it, misspelled (`valu` for `value`).
                        let strays = attrs
                            .iter()
                            .map(|(k, _)| k)
                            .filter(|k| spec.attrs.iter().all(|d| d.name != *k));
                        let max = if a.name.len() < 6 { 1 } else { 2 };
                        let close = crate::suggest::closest(a.name, strays, max);
                        if !close.is_empty() {
                            let close: Vec<String> =
                                close.iter().map(|c| format!("`{c}`")).collect();
                            message.push_str(&format!(
                                "; the op has {}: misspelled?",
                                close.join(" and ")
                            ));
                        }
                        push(FindingKind::Missing, message)
                    }
                }
            }
            if out.len() == found_before {
                clean.insert((sym, attr_id));
                skip[d] = sym.0 + 1;
            }
            if out[found_before..]
                .iter()
                .all(|f| f.kind != FindingKind::Misfit)
            {
                fitting_here.insert((sym, attr_id));
            }
        }
    }
    (out, fitting_here)
}

/// What an op lacking attribute `a` of its definition means: Paddle cannot run it without a
/// required one; for one with a default, irw computes with that default (as `irw ops` prints
/// it) and writes it into Paddle JSON ([`AttrSpec::default_value`]), unless it has no value
/// irw assumes.
pub fn missing_message(a: &AttrSpec) -> String {
    match (a.default, a.default_value()) {
        (None, _) => format!(
            "lacks attribute `{}` ({}), which Paddle's definition requires (it has no default)",
            a.name,
            a.ty.describe()
        ),
        (Some(d), Some(_)) => format!(
            "lacks attribute `{}` ({}) of Paddle's definition; irw assumes its default, {d}",
            a.name,
            a.ty.describe()
        ),
        (Some(d), None) => format!(
            "lacks attribute `{}` ({}) of Paddle's definition; irw does not assume its \
             default ({d})",
            a.name,
            a.ty.describe()
        ),
    }
}

/// "is not in the dialect; did you mean `pd_op.sgd_`?" for a name at most two edits from a
/// known op of its dialect (and long enough that this is not chance).
fn typo_hint(name: &str) -> Option<String> {
    let (dialect, short) = name.split_once('.')?;
    if short.len() < 3 {
        return None;
    }
    let known = Dialect::get()
        .all()
        .iter()
        .map(|s| s.name)
        .filter(|n| n.split_once('.').is_some_and(|(d, _)| d == dialect));
    let close = crate::suggest::closest(name, known, if short.len() < 6 { 1 } else { 2 });
    let hint = crate::suggest::did_you_mean(&close)?;
    Some(format!(
        "is not in the dialect (irw keeps it as an op with unknown effects); {hint}"
    ))
}

/// The ops with attribute misfits: a rewrite fails on a misfit outside this set of its input.
pub fn misfit_ops(findings: &[Finding]) -> FxHashSet<(Which, OpId)> {
    findings
        .iter()
        .filter(|f| f.kind == FindingKind::Misfit)
        .map(|f| (f.which, f.op))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::verify_module;
    use crate::ir::parse_module;
    use crate::SourceFile;

    fn check(text: &str) -> Result<(), String> {
        let m = parse_module(&SourceFile::new("t.ir", text)).map_err(|d| d.to_string())?;
        verify_module(&m).map_err(|e| e.to_diagnostic(&m, None).to_string())
    }

    #[test]
    fn operand_counts_follow_the_table() {
        let text = "{\n    (%0) = \"pd_op.full\" () {} : () -> tensor<f32>\n    (%1) = \"pd_op.relu\" (%0, %0) {} : (tensor<f32>, tensor<f32>) -> tensor<f32>\n}\n";
        let e = check(text).unwrap_err();
        assert!(e.contains("pd_op.relu") && e.contains("2 operands"), "{e}");
    }

    #[test]
    fn unknown_ops_are_not_counted() {
        let text = "{\n    (%0) = \"my.op\" () {} : () -> tensor<f32>\n    (%1, %2) = \"my.other\" (%0, %0, <<NULL VALUE>>) {} : (tensor<f32>, tensor<f32>, <<NULL TYPE>>) -> tensor<f32>, tensor<f32>\n}\n";
        check(text).unwrap();
    }

    #[test]
    fn typos_and_misfits_are_found() {
        let text = "{\n    (%0) = \"pd_op.full\" () {dtype:float32,place:Place(cpu),shape:[1],value:1} : () -> tensor<1xf32>\n    (%1) = \"pd_op.sdg_\" (%0) {} : (tensor<1xf32>) -> tensor<1xf32>\n    (%2, %3, %4) = \"pd_op.layer_norm\" (%0, <<NULL VALUE>>, <<NULL VALUE>>) {begin_norm_axis:1,epsilon:\"x\"} : (tensor<1xf32>, <<NULL TYPE>>, <<NULL TYPE>>) -> tensor<1xf32>, tensor<1xf32>, tensor<1xf32>\n}\n";
        let m = parse_module(&SourceFile::new("t.ir", text)).expect("parses");
        let f = super::findings_beyond(&m, &Default::default()).0;
        let msgs: Vec<&str> = f.iter().map(|f| f.message.as_str()).collect();
        assert!(
            msgs.iter()
                .any(|m| m.contains("did you mean") && m.contains("pd_op.sgd_")),
            "{msgs:?}"
        );
        assert!(
            msgs.iter()
                .any(|m| m.contains("`epsilon:\"x\"`") && m.contains("float32")),
            "{msgs:?}"
        );
        assert_eq!(super::misfit_ops(&f).len(), 1);
    }

    /// A dictionary's findings depend on the op name too: one that fits `pd_op.full` (a scalar
    /// `value`) misfits `pd_op.full_int_array` (an int array), at every op of that name, however
    /// the two names alternate.
    #[test]
    fn one_dictionary_is_checked_per_op_name() {
        let d = "{dtype:float32,place:Place(cpu),shape:[1],value:1}";
        let full = format!("\"pd_op.full\" () {d} : () -> tensor<1xf32>");
        let ints = format!("\"pd_op.full_int_array\" () {d} : () -> tensor<1xf32>");
        let text = format!(
            "{{\n    (%0) = {full}\n    (%1) = {ints}\n    (%2) = {full}\n    (%3) = {ints}\n}}\n"
        );
        let m = parse_module(&SourceFile::new("t.ir", &text)).expect("parses");
        let f = super::findings_beyond(&m, &Default::default()).0;
        let names: Vec<&str> = f
            .iter()
            .filter(|f| f.kind == super::FindingKind::Misfit)
            .map(|f| m.ctx.str(m.main.op_name(f.op)))
            .collect();
        assert_eq!(names, ["pd_op.full_int_array"; 2], "{f:?}");
    }
}
