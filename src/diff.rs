//! Structural comparison of programs (`irw diff A B`): equal up to value renaming and the order
//! of independent ops.
//!
//! Every op gets a *signature*, a hash of its name, its attributes and the signatures of the
//! values it reads. A value's signature is its defining op's signature and result index, or the
//! name of the keyword argument / parameter / feed it stands for, so numbering never matters.
//! Ordering matters only where it changes meaning: a read of a value that an in-place op,
//! optimizer or unknown op has written earlier also hashes in that writer's signature (the
//! value's current *version*), so `sgd_` reading a buffer before or after it is zeroed are
//! different ops, while two independent updates may come in either order.
//!
//! Pure ops compare as a set (identical pure ops are one computation, as CSE would make them);
//! effectful ops compare as a multiset. The report lists what is only in one program.

use crate::dialect::{Dialect, Effect};
use crate::ir::{Context, Module, OpId, Program, ValueDef, ValueId};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

/// What `irw diff` found for one pair of programs.
#[derive(Debug, Default)]
struct ProgramDiff {
    /// Printed op lines present only in the first / second program.
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
}

impl ProgramDiff {
    fn is_equal(&self) -> bool {
        self.only_a.is_empty() && self.only_b.is_empty()
    }
}

fn mix(parts: &[u64]) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    parts.hash(&mut h);
    h.finish()
}

fn str_hash(s: &str) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    s.hash(&mut h);
    h.finish()
}

/// Signatures of every op of `p` in print order, with whether the op is pure.
fn signatures(ctx: &Context, p: &Program, ignore: &[String]) -> Vec<(OpId, u64, bool)> {
    let dialect = Dialect::get();
    let mut value_sig: FxHashMap<ValueId, u64> = FxHashMap::default();
    // Current version of a written value: the signature of its last writer.
    let mut version: FxHashMap<ValueId, u64> = FxHashMap::default();
    let mut out = Vec::with_capacity(p.num_ops());
    let mut text = String::new();
    for op in p.walk() {
        let name = ctx.str(p.op_name(op));
        let attrs = ctx.attrs(p.op_attrs(op));
        let spec = dialect.spec(name);
        let effect = spec.map_or(Effect::Unknown, |s| s.effect);
        let attr_sig = if ignore.iter().any(|k| attrs.get(k).is_some()) {
            let mut d = attrs.to_dict();
            for k in ignore {
                d.remove(k);
            }
            let mut t = String::new();
            d.write_to(&mut t);
            str_hash(&t)
        } else {
            text.clear();
            attrs.write_to(&mut text);
            str_hash(&text)
        };
        let mut parts = vec![str_hash(name), attr_sig];
        for v in p.operands(op) {
            parts.push(match v {
                None => 0,
                Some(v) => {
                    let base = *value_sig.entry(v).or_insert_with(|| base_sig(ctx, p, v));
                    match version.get(&v) {
                        Some(&w) => mix(&[base, w]),
                        None => base,
                    }
                }
            });
        }
        for &r in p.regions(op) {
            parts.push(r.0 as u64 + 1);
        }
        let sig = mix(&parts);
        // Name-bearing ops stand for the state they name, so programs numbering it differently
        // still agree.
        let named = crate::dialect::protocol::SCOPE_NAME_ATTRS
            .iter()
            .find_map(|k| attrs.get(k));
        for (i, r) in p.results(op).enumerate() {
            let s = match named {
                Some(n) if effect == Effect::Io => mix(&[str_hash(&n.to_text()), i as u64]),
                _ => mix(&[sig, i as u64]),
            };
            value_sig.insert(r, s);
        }
        // What this op writes gets a new version.
        let written: Vec<usize> = match (effect, spec) {
            (Effect::Pure | Effect::Io | Effect::Random | Effect::Control, _) => vec![],
            (_, Some(s)) if !s.aliases.is_empty() => {
                s.aliases.iter().map(|&(_, o)| o as usize).collect()
            }
            (Effect::Collective, _) => vec![],
            _ => (0..p.num_operands(op)).collect(),
        };
        for i in written {
            if let Some(v) = p.operand(op, i) {
                version.insert(v, sig);
            }
        }
        out.push((op, sig, effect.is_pure()));
    }
    out
}

fn base_sig(ctx: &Context, p: &Program, v: ValueId) -> u64 {
    match p.value_def(v) {
        ValueDef::Kwarg { block, index } => mix(&[
            1,
            str_hash(ctx.str(p.block_kwargs(block)[index as usize].name)),
        ]),
        ValueDef::Arg { index, .. } => mix(&[2, index as u64]),
        // Results are recorded when their op is visited, before any use.
        ValueDef::Result { op, index } => mix(&[3, op.0 as u64, index as u64]),
    }
}

/// The printed line of each op, in print order.
fn op_lines(ctx: &Context, p: &Program) -> FxHashMap<OpId, String> {
    let text = crate::ir::print_program(ctx, p);
    let lines = text
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('('));
    p.walk()
        .into_iter()
        .zip(lines.map(str::to_string))
        .collect()
}

/// Compares two programs.
/// Attributes named in `ignore` are left out of the comparison.
fn diff_programs(
    ca: &Context,
    a: &Program,
    cb: &Context,
    b: &Program,
    ignore: &[String],
) -> ProgramDiff {
    let count = |ctx: &Context, p: &Program| {
        let mut m: BTreeMap<u64, (usize, OpId)> = BTreeMap::new();
        for (op, sig, pure) in signatures(ctx, p, ignore) {
            let e = m.entry(sig).or_insert((0, op));
            if !pure || e.0 == 0 {
                e.0 += 1;
            }
        }
        m
    };
    let (ma, mb) = (count(ca, a), count(cb, b));
    let (la, lb) = (op_lines(ca, a), op_lines(cb, b));
    let mut d = ProgramDiff::default();
    let only = |m1: &BTreeMap<u64, (usize, OpId)>,
                m2: &BTreeMap<u64, (usize, OpId)>,
                lines: &FxHashMap<OpId, String>,
                out: &mut Vec<(OpId, String)>| {
        for (sig, &(n, op)) in m1 {
            let other = m2.get(sig).map_or(0, |e| e.0);
            for _ in other..n {
                out.push((op, lines.get(&op).cloned().unwrap_or_default()));
            }
        }
    };
    let mut oa = Vec::new();
    let mut ob = Vec::new();
    only(&ma, &mb, &la, &mut oa);
    only(&mb, &ma, &lb, &mut ob);
    oa.sort_by_key(|(op, _)| op.0);
    ob.sort_by_key(|(op, _)| op.0);
    d.only_a = oa.into_iter().map(|(_, l)| l).collect();
    d.only_b = ob.into_iter().map(|(_, l)| l).collect();
    d
}

/// Compares the main programs and, when either has one, the startup programs, and compares
/// keyword arguments by name. Returns a report and whether the modules are equal.
pub fn diff_modules(a: &Module, b: &Module, max_lines: usize, ignore: &[String]) -> (String, bool) {
    use std::fmt::Write;
    let mut report = String::new();
    let mut equal = true;
    let kw = |m: &Module| -> Vec<String> {
        let mut v: Vec<String> = m
            .main
            .block_kwargs(m.main.top_block())
            .iter()
            .map(|k| m.ctx.str(k.name).to_string())
            .collect();
        v.sort();
        v
    };
    let (ka, kb) = (kw(a), kw(b));
    if ka != kb {
        equal = false;
        let _ = writeln!(
            report,
            "keyword arguments differ:\n  A: {}\n  B: {}",
            ka.join(", "),
            kb.join(", ")
        );
    }
    let empty = Program::new();
    let pairs = [
        ("main", Some(&a.main), Some(&b.main)),
        ("startup", a.startup.as_ref(), b.startup.as_ref()),
    ];
    for (what, pa, pb) in pairs {
        if pa.is_none() && pb.is_none() {
            continue;
        }
        let d = diff_programs(
            &a.ctx,
            pa.unwrap_or(&empty),
            &b.ctx,
            pb.unwrap_or(&empty),
            ignore,
        );
        if d.is_equal() {
            let _ = writeln!(report, "{what} programs: equal");
            continue;
        }
        equal = false;
        let _ = writeln!(
            report,
            "{what} programs differ: {} ops only in A, {} only in B",
            d.only_a.len(),
            d.only_b.len()
        );
        for (tag, lines) in [("A", &d.only_a), ("B", &d.only_b)] {
            for l in lines.iter().take(max_lines) {
                let _ = writeln!(report, "  only in {tag}: {l}");
            }
            if lines.len() > max_lines {
                let _ = writeln!(
                    report,
                    "  ... and {} more only in {tag}",
                    lines.len() - max_lines
                );
            }
        }
    }
    (report, equal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::parse_module;
    use crate::SourceFile;

    fn m(t: &str) -> Module {
        parse_module(&SourceFile::new("t.ir", t)).unwrap()
    }

    const A: &str = "{\n    (%0) = \"pd_op.full\" () {value:1} : () -> tensor<f32>\n    (%1) = \"pd_op.full\" () {value:2} : () -> tensor<f32>\n    (%2) = \"pd_op.add\" (%0, %1) {} : (tensor<f32>, tensor<f32>) -> tensor<f32>\n    () = \"builtin.shadow_output\" (%2) {output_name:\"o\"} : (tensor<f32>) -> \n}\n";
    // The same computation with the two constants swapped in order: equal.
    const B: &str = "{\n    (%0) = \"pd_op.full\" () {value:2} : () -> tensor<f32>\n    (%1) = \"pd_op.full\" () {value:1} : () -> tensor<f32>\n    (%2) = \"pd_op.add\" (%1, %0) {} : (tensor<f32>, tensor<f32>) -> tensor<f32>\n    () = \"builtin.shadow_output\" (%2) {output_name:\"o\"} : (tensor<f32>) -> \n}\n";
    // Operands swapped: a different program.
    const C: &str = "{\n    (%0) = \"pd_op.full\" () {value:1} : () -> tensor<f32>\n    (%1) = \"pd_op.full\" () {value:2} : () -> tensor<f32>\n    (%2) = \"pd_op.add\" (%1, %0) {} : (tensor<f32>, tensor<f32>) -> tensor<f32>\n    () = \"builtin.shadow_output\" (%2) {output_name:\"o\"} : (tensor<f32>) -> \n}\n";

    #[test]
    fn equal_up_to_renaming_and_independent_order() {
        assert!(diff_modules(&m(A), &m(B), 10, &[]).1);
    }

    #[test]
    fn operand_order_matters() {
        let (report, eq) = diff_modules(&m(A), &m(C), 10, &[]);
        assert!(!eq);
        assert!(
            report.contains("only in A: (%2) = \"pd_op.add\" (%0, %1)"),
            "{report}"
        );
    }

    #[test]
    fn reading_before_or_after_an_in_place_write_differs() {
        let k = "{\n    ^kw:\n        %kwarg_b {persistable:true}\n    (%0) = \"pd_op.full\" () {value:0} : () -> tensor<f32>\n";
        let read_then_zero = format!("{k}    () = \"builtin.shadow_output\" (%kwarg_b) {{output_name:\"o\"}} : (tensor<f32>) -> \n    (%1) = \"pd_op.add_\" (%kwarg_b, %0) {{}} : (tensor<f32>, tensor<f32>) -> tensor<f32>\n}}\n");
        let zero_then_read = format!("{k}    (%1) = \"pd_op.add_\" (%kwarg_b, %0) {{}} : (tensor<f32>, tensor<f32>) -> tensor<f32>\n    () = \"builtin.shadow_output\" (%kwarg_b) {{output_name:\"o\"}} : (tensor<f32>) -> \n}}\n");
        assert!(!diff_modules(&m(&read_then_zero), &m(&zero_then_read), 10, &[]).1);
    }

    #[test]
    fn duplicate_pure_ops_count_once() {
        let dup = "{\n    (%0) = \"pd_op.full\" () {value:1} : () -> tensor<f32>\n    (%1) = \"pd_op.full\" () {value:1} : () -> tensor<f32>\n}\n";
        let one = "{\n    (%0) = \"pd_op.full\" () {value:1} : () -> tensor<f32>\n}\n";
        assert!(diff_modules(&m(dup), &m(one), 10, &[]).1);
    }
}
