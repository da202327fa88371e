//! `irw ops [NAME|PATTERN]`: the dialect reference, printed from the table irw runs on.
//!
//! Why a command: a rule author needs an op's operand and result names (`grad:`), its
//! attributes with Paddle's types and defaults (what a build must give, what the JSON writer
//! writes), its effect class (what the engines may reorder) and whether `irw check` can run
//! it. All of that is data in `src/dialect`; this prints it instead of sending users to the
//! data files. One op by name gives everything about it; a pattern (`*` matches any run of
//! characters, a name without a dialect is looked up in `pd_op`) lists the matching ops' signatures.

use super::Failure;
use crate::dialect::paddle_json::tag_of_type;
use crate::dialect::{Dialect, OpSpec, ResultRule, Shape};
use crate::json::attrs::describe;
use clap::Args;
use std::fmt::Write;

#[derive(Args, Debug)]
pub struct OpsArgs {
    /// An op name (`pd_op.layer_norm`, or `layer_norm` for `pd_op.`) or a pattern with `*`
    /// (`pd_op.*norm*`); without one, every op's signature.
    pattern: Option<String>,
}

pub fn ops_command(a: &OpsArgs) -> Result<(), Failure> {
    let d = Dialect::get();
    let pattern = a.pattern.as_deref().unwrap_or("*");
    let full = |p: &str| {
        if p.contains('.') || p.starts_with('*') {
            p.to_string()
        } else {
            format!("pd_op.{p}")
        }
    };
    let pattern = full(pattern);
    if !pattern.contains('*') {
        return match d.spec(&pattern) {
            Some(s) => super::streams::print(&detail(s)),
            None => {
                let close = crate::suggest::closest(&pattern, d.all().iter().map(|s| s.name), 2);
                let hint = crate::suggest::did_you_mean(&close)
                    .map_or(String::new(), |h| format!("; {h}"));
                Err(Failure::Input(crate::diag::Diagnostic::error(format!(
                    "`{pattern}` is not in the dialect{hint}"
                ))))
            }
        };
    }
    let matching: Vec<&OpSpec> = d.all().iter().filter(|s| glob(&pattern, s.name)).collect();
    if matching.is_empty() {
        return Err(Failure::Input(crate::diag::Diagnostic::error(format!(
            "no op of the dialect matches `{pattern}`"
        ))));
    }
    let mut out = String::new();
    for s in matching {
        let _ = writeln!(out, "{}", signature(s));
    }
    super::streams::print(&out)
}

/// `*` matches any run of characters; everything else itself.
fn glob(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    true
}

fn operand_list(names: &[&str], optional: impl Fn(usize) -> bool) -> String {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| format!("{n}{}", if optional(i) { "?" } else { "" }))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `pd_op.layer_norm(x, scale?, bias?) -> (out, mean, variance)`.
fn signature(s: &OpSpec) -> String {
    format!(
        "{}({}) -> ({})",
        s.name,
        operand_list(s.operands, |i| s.operand_optional(i)),
        operand_list(s.results, |i| s.result_optional(i))
    )
}

/// How the executor runs `name`, in words (`None`: it cannot).
fn executor_runs(name: &str) -> Option<&'static str> {
    match crate::exec::ops::exec_of(name)? {
        crate::exec::ops::Exec::Kernel(_) => Some("has a kernel (src/exec/ops.rs)"),
        crate::exec::ops::Exec::Context(_) => {
            Some("runs it in the interpreter, with the run's context: scope, feeds, random generator, every rank or its regions (src/exec/ops.rs)")
        }
    }
}

/// Everything the dialect says about one op.
fn detail(s: &OpSpec) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{}", signature(s));
    let _ = writeln!(o, "  operands:");
    if s.operands.is_empty() {
        let _ = writeln!(o, "    (none)");
    }
    for (i, n) in s.operands.iter().enumerate() {
        let opt = if s.operand_optional(i) {
            "  optional (<<NULL VALUE>> when absent)"
        } else {
            ""
        };
        let _ = writeln!(o, "    {i}: {n}{opt}");
    }
    let _ = writeln!(o, "  attributes:");
    if s.attrs.is_empty() {
        let _ = writeln!(o, "    (none in Paddle's definition)");
    }
    let width = s.attrs.iter().map(|a| a.name.len()).max().unwrap_or(0);
    for a in s.attrs {
        let default = match a.default {
            None => "(no default: required)".to_string(),
            Some(d) if a.given() => format!("(required: Paddle's default {d} is not assumed)"),
            Some(d) => format!("= {d}"),
        };
        let tag = tag_of_type(a.ty).map_or("tag from the value".to_string(), describe);
        let _ = writeln!(
            o,
            "    {:width$}  {:<14} {}  [JSON {}]",
            a.name,
            a.ty.describe(),
            default,
            tag
        );
    }
    let _ = writeln!(o, "  results:");
    if s.results.is_empty() {
        let _ = writeln!(o, "    (none)");
    }
    for (i, n) in s.results.iter().enumerate() {
        let mut notes = Vec::new();
        if s.result_optional(i) {
            notes.push("optional".to_string());
        }
        if let Some(&(_, op)) = s.aliases.iter().find(|(r, _)| *r as usize == i) {
            notes.push(format!(
                "in place: is operand {op} ({})",
                s.operands.get(op as usize).copied().unwrap_or("?")
            ));
        }
        if s.result_unset(i) {
            notes.push("dimensions left unset by Paddle (printed 0x..)".into());
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!("  {}", notes.join("; "))
        };
        let _ = writeln!(o, "    {i}: {n}{notes}");
    }
    let _ = writeln!(o, "  result types: {}", shape_text(s));
    let _ = writeln!(o, "  rules building it: {}", rule_text(s));
    let _ = writeln!(o, "  effect: {}", s.effect.class_name());
    let pairs: Vec<String> = s
        .aliases
        .iter()
        .map(|&(r, op)| {
            format!(
                "{} = {}",
                s.results.get(r as usize).copied().unwrap_or("?"),
                s.operands.get(op as usize).copied().unwrap_or("?")
            )
        })
        .collect();
    let _ = writeln!(
        o,
        "  in-place pairs: {}",
        if pairs.is_empty() {
            "none".to_string()
        } else {
            pairs.join(", ")
        }
    );
    if !s.same_shape.is_empty() {
        let names: Vec<&str> = s.operand_names().collect();
        let name = |i: u8| names.get(i as usize).copied().unwrap_or("?");
        let ties: Vec<String> = (s.same_shape.iter())
            .map(|&(a, b)| format!("{} as {}", name(a), name(b)))
            .collect();
        let _ = writeln!(
            o,
            "  operand shapes: {} (dtypes may differ; the verifier refuses another shape)",
            ties.join(", ")
        );
    }
    if !s.ranks.is_empty() {
        let names: Vec<&str> = s.operand_names().collect();
        let ranks: Vec<String> = (s.ranks.iter())
            .map(|&(i, lo, hi)| {
                let name = names.get(i as usize).copied().unwrap_or("?");
                format!("{name} {lo} to {hi}")
            })
            .collect();
        let _ = writeln!(
            o,
            "  operand ranks: {} (Paddle's kernels take no other; the verifier refuses another)",
            ranks.join(", ")
        );
    }
    let _ = writeln!(
        o,
        "  executor (irw run/check): {}",
        executor_runs(s.name).unwrap_or("no kernel in src/exec/ops.rs")
    );
    o
}

fn shape_text(s: &OpSpec) -> String {
    let names = |i: u8| s.operands.get(i as usize).copied().unwrap_or("?");
    match s.shape {
        Shape::Unknown => "not derived (the family is not known to irw)".into(),
        Shape::Unchanged(i) => format!(
            "unchanged: result 0 is operand `{}`'s type (UnchangedInferMeta)",
            names(i)
        ),
        Shape::Grad(g) | Shape::Outs(g) => {
            let per: Vec<String> = s
                .results
                .iter()
                .enumerate()
                .map(|(k, r)| match g.get(k) {
                    Some(&i) if i != u8::MAX => format!("{r} as `{}`", names(i)),
                    _ => format!("{r} not derived"),
                })
                .collect();
            format!(
                "{}: {} ({})",
                s.shape.name(),
                per.join(", "),
                s.shape.infer_meta()
            )
        }
        Shape::Reduced(i) | Shape::Dim0Times(i) | Shape::Dim0Over(i) => {
            format!(
                "{} of operand `{}` ({})",
                s.shape.name(),
                names(i),
                s.shape.infer_meta()
            )
        }
        sh => format!("{} ({})", sh.name(), sh.infer_meta()),
    }
}

fn rule_text(s: &OpSpec) -> String {
    let names = |i: u8| s.operands.get(i as usize).copied().unwrap_or("?");
    match s.result_rule {
        ResultRule::Explicit => "the rule gives the result type".into(),
        ResultRule::SameAs(i) => format!("result type derived: operand `{}`'s", names(i)),
        ResultRule::Broadcast(i, j) => format!(
            "result type derived: `{}` and `{}` broadcast, `{}`'s dtype",
            names(i),
            names(j),
            names(i)
        ),
        ResultRule::CompareOf(i) => format!("result type derived: `{}`'s shape, bool", names(i)),
        ResultRule::CastOf(i) => format!("result type derived: `{}`'s shape, `dtype`", names(i)),
        ResultRule::FromShapeDtypeAttrs => "result type derived: `shape` and `dtype`".into(),
        ResultRule::IntArray => "result type derived: `value`'s length, `dtype`".into(),
        ResultRule::ReducedOf(i) => format!("result type derived: `{}` reduced", names(i)),
        ResultRule::Dim0Times(i, k) => format!("result type derived: `{}` dim 0 × `{k}`", names(i)),
        ResultRule::Dim0Over(i, k) => format!("result type derived: `{}` dim 0 ÷ `{k}`", names(i)),
        ResultRule::VecOfOperands => "result type derived: vec of the operands' types".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("pd_op.*norm*", "pd_op.layer_norm"));
        assert!(glob("pd_op.*norm*", "pd_op.layer_norm_grad"));
        assert!(!glob("pd_op.*norm", "pd_op.layer_norm_grad"));
        assert!(glob("*", "cf.yield"));
        assert!(!glob("pd_op.a*a", "pd_op.a"));
    }

    #[test]
    fn layer_norm_reference() {
        let s = Dialect::get().spec("pd_op.layer_norm").expect("known");
        let t = detail(s);
        assert!(
            t.contains("epsilon") && t.contains("float32") && t.contains("= 1e-5"),
            "{t}"
        );
        assert!(t.contains("begin_norm_axis") && t.contains("int32"), "{t}");
        assert!(
            t.contains("2: variance") && t.contains("LayerNormInferMeta"),
            "{t}"
        );
    }
}
