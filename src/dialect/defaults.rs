//! The attributes Paddle's op builders set when the caller leaves an argument out: every
//! attribute of the op's definition that has a default (`ops.yaml`: `full(shape, value,
//! dtype=float32, place=CPUPlace())`, `momentum_(..., use_nesterov=false, rescale_grad=1.0)`),
//! as the dialect table gives it ([`super::AttrSpec::default_value`]).
//!
//! Why: a Paddle program never lacks these attributes, because Paddle's builders always write
//! them, so an op a rule builds carries them too. A rule writes only what differs:
//! `pd_op.scale_(%m, %k) {op_role: optimize}` gets `bias: 0.0` and `bias_after_scale: true` as
//! Paddle's builder would give them. What a rule writes always wins; only absent keys are
//! filled, so a rule that spells every attribute builds exactly what it wrote. Both engines
//! fill them: the structural engine when a rule is lowered, the e-graph when a right-hand side
//! is built. A default irw does not assume (a `given(..)` of the dialect data) is not
//! filled: a build must give that attribute.

use crate::ir::Attr;

/// The default attributes of `op`, in the definition's order (empty for an op without any, or
/// not in the table).
pub fn default_attrs(op: &str) -> Vec<(&'static str, &'static Attr)> {
    super::Dialect::get().spec(op).map_or_else(Vec::new, |s| {
        s.attrs
            .iter()
            .filter_map(|a| Some((a.name, a.default_value()?)))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_definitions() {
        let full = default_attrs("pd_op.full");
        let keys: Vec<&str> = full.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["dtype", "place"]);
        assert!(default_attrs("pd_op.relu").is_empty());
        assert!(default_attrs("no.such_op").is_empty());
        let scale: Vec<&str> = default_attrs("pd_op.scale")
            .iter()
            .map(|(k, _)| *k)
            .collect();
        assert_eq!(scale, ["bias", "bias_after_scale"]);
        // A collective's reduction is a default irw does not assume: never filled.
        assert!(default_attrs("pd_op.all_reduce")
            .iter()
            .all(|(k, _)| *k != "reduce_type"));
    }
}
