//! Parse errors: pest's failures turned into diagnostics that name what was expected in
//! words, at a position in the file.

use super::*;

pub(super) fn describe(rule: &Rule) -> &'static str {
    match rule {
        Rule::results => "a result list like `(%0)` or `()`",
        Rule::value_def => "a result name like `%3`",
        Rule::op_name => "a quoted op name like \"pd_op.add\"",
        Rule::operands => "an operand list like `(%0, %1)`",
        Rule::operand_label
        | Rule::null_value
        | Rule::value_ref
        | Rule::arg_ref
        | Rule::kwarg_ref => "a value like `%3`, `%arg_0`, `%kwarg_<name>` or `<<NULL VALUE>>`",
        Rule::attr_dict | Rule::dict => "an attribute dictionary like `{op_role:1}`",
        Rule::attr_key => "an attribute name",
        Rule::operand_types => "operand types like `(tensor<4xf32>)`",
        Rule::result_types | Rule::type_ | Rule::ty => "a type like `tensor<-1x8xf32>`",
        Rule::region_open => "`{`",
        Rule::dim | Rule::dtype | Rule::tensor_type => "a tensor type like `tensor<4xf32>`",
        Rule::EOI => "the end of the line",
        Rule::block_arg => "a block argument like `%arg_0 {attrs}`",
        _ => "",
    }
}

pub(super) fn pest_error(
    src: &SourceFile,
    l: &Line<'_>,
    e: pest::error::Error<Rule>,
) -> Diagnostic {
    let pos = match e.location {
        pest::error::InputLocation::Pos(p) => p,
        pest::error::InputLocation::Span((s, _)) => s,
    };
    let mut expected: Vec<&str> = match &e.variant {
        pest::error::ErrorVariant::ParsingError { positives, .. } => positives
            .iter()
            .map(describe)
            .filter(|s| !s.is_empty())
            .collect(),
        pest::error::ErrorVariant::CustomError { .. } => vec![],
    };
    expected.dedup();
    let rest = &l.text[pos.min(l.text.len())..];
    let found = match rest.chars().next() {
        None => "the end of the line".to_string(),
        Some(c) => format!(
            "`{}`",
            rest.split([' ', ',', ')'])
                .next()
                .filter(|s| !s.is_empty())
                .unwrap_or(&c.to_string())
        ),
    };
    let msg = if expected.is_empty() {
        format!("unexpected {found} in op line")
    } else {
        format!("expected {}, found {found}", expected.join(" or "))
    };
    let mut d = Diagnostic::at(src, l.offset + pos, msg);
    let control_flow_stack = ["%stack_", "%inlet_", "%outlet_"]
        .iter()
        .any(|p| rest.starts_with(p));
    if control_flow_stack {
        d = d.with_hint(
            "Paddle names the values of `cf.stack_create` so: a program that trains through \
             control flow (`static.nn.cond`, `while_loop`) keeps the forward's values for \
             backward in such stacks, and irw does not read those programs",
        );
    } else if rest.starts_with('<') && !rest.contains('>') {
        d = d.with_hint("this `<` is not closed by `>`: a type reads like `tensor<4xf32>`");
    } else if rest.starts_with('"') && !rest[1..].contains('"') {
        d = d.with_hint("this string is not terminated on its line");
    } else {
        d = d.with_hint(
            "an op line reads `(%0) = \"dialect.op\" (%1, %2) {attrs} : (types) -> types`",
        );
    }
    d
}

pub(super) fn err_at(src: &SourceFile, at: &str, msg: impl Into<String>) -> Diagnostic {
    let offset = (at.as_ptr() as usize).wrapping_sub(src.text.as_ptr() as usize);
    Diagnostic::at(src, offset.min(src.text.len()), msg)
}
