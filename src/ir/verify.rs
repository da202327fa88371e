//! The verifier: the invariants every program satisfies after parsing and after every rewrite.
//!
//! - every use is dominated by its definition (defined earlier in the same block or in an
//!   enclosing block, never inside a region that has ended);
//! - for ops the dialect knows, operand and result counts fit it ([`OpCounts`]);
//! - every value that a plain op uses has a known type (so it can be printed);
//! - keyword-argument names are unique within their block;
//! - `cf.yield` is the last op of a region's block (never in a top-level block), and each block
//!   of a `pd_op.if` with results or of a `pd_op.while` ends with one that yields one value per
//!   result (a `while` yields its next condition first) of the result's type.
//!
//! Errors name the op; [`VerifyError::to_diagnostic`] points at its line when the op was parsed
//! (the parser records positions), so a bad input is reported like a syntax error.
//!
//! The IR knows no op table: the dialect sits above the IR and hands the verifier what it knows
//! about op counts as an [`OpCounts`] (the dialect's `verify_module` passes its table), so
//! `ir` never imports the dialect.
//!
//! Duplicate definitions cannot be represented in the arena (each value has one definition), so
//! the parser reports them. A failure after a rewrite is a bug in a rule or in irw, and is
//! reported as such.

use super::program::{BlockId, OpId, OpSyntax, Program, ValueId};
use super::{Context, Module, Sym, Which};
use crate::diag::Diagnostic;
use rustc_hash::{FxHashMap, FxHashSet};
use std::rc::Rc;

/// A broken invariant: which program, which op, and what is wrong.
#[derive(Debug, Clone)]
pub struct VerifyError {
    pub which: Which,
    pub op: Option<OpId>,
    pub message: String,
}

impl VerifyError {
    /// A diagnostic pointing at the op's line in `src` when the op was parsed from it.
    pub fn to_diagnostic(&self, m: &Module, src: Option<&crate::diag::SourceFile>) -> Diagnostic {
        let pos = self
            .op
            .and_then(|op| m.program(self.which).and_then(|p| p.position(op)));
        let d = Diagnostic::at_if_known(src, pos, self.message.clone());
        match self.which {
            Which::Main => d,
            Which::Startup => d.with_note("in the startup program"),
        }
    }
}

impl std::fmt::Display for VerifyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// What the verifier needs to know about ops: how many operands and results each takes.
pub trait OpCounts {
    /// `Err(what is wrong)`, a phrase after the op's name (`has 2 operands; ...`), when an op
    /// named `name` may not have `operands` operands and `results` results; `Ok` for ops it
    /// does not know.
    fn check_counts(&self, name: &str, operands: usize, results: usize) -> Result<(), String>;

    /// The `(result, operand)` pairs of an op named `name` whose result is its operand's
    /// buffer, written in place, and so has that operand's type (none for ops it does not
    /// know).
    fn buffer_results(&self, _name: &str) -> Vec<(usize, usize)> {
        Vec::new()
    }

    /// The operands of an op named `name` that must have another operand's shape (none for
    /// ops it does not know).
    fn same_shape(&self, _name: &str) -> Vec<SameShape> {
        Vec::new()
    }

    /// The ranks operands of an op named `name` may have, where its kernels take fewer than its
    /// types admit (none for ops it does not know).
    fn operand_ranks(&self, _name: &str) -> Vec<OperandRanks> {
        Vec::new()
    }

    /// How to tell whether an op named `name` has operands its result-type rule accepts (a
    /// matmul's inner dimensions agree): a function that says what does not fit, or `None`
    /// for ops whose operands it does not check.
    fn operand_check(&self, _name: &str) -> Option<OperandCheck> {
        None
    }
}

/// What does not fit in the operands of op `OpId` (a phrase after the op's name), or `None`.
pub type OperandCheck = fn(&Context, &Program, OpId) -> Option<String>;

/// Operand `operand` of an op has the shape of its operand `like` (each with its index and
/// name): an optimizer's gradient and moments have its parameter's shape, or its kernel reads
/// past one of them.
#[derive(Clone, Copy, Debug)]
pub struct SameShape {
    pub operand: (usize, &'static str),
    pub like: (usize, &'static str),
}

/// Operand `operand` (its index and name) of an op has a rank from `lowest` to `highest`.
#[derive(Clone, Copy, Debug)]
pub struct OperandRanks {
    pub operand: (usize, &'static str),
    pub lowest: usize,
    pub highest: usize,
}

/// The terminator of a region's block.
const YIELD: &str = "cf.yield";

/// Verifies both programs of a module; op counts are checked against `ops`.
pub fn verify_module(m: &Module, ops: &dyn OpCounts) -> Result<(), VerifyError> {
    verify_program(&m.ctx, &m.main, ops).map_err(|(op, message)| VerifyError {
        which: Which::Main,
        op,
        message,
    })?;
    if let Some(s) = &m.startup {
        verify_program(&m.ctx, s, ops).map_err(|(op, message)| VerifyError {
            which: Which::Startup,
            op,
            message,
        })?;
    }
    Ok(())
}

/// Verifies one program; on failure, the offending op (if any) and the message.
pub fn verify_program(
    ctx: &Context,
    p: &Program,
    ops: &dyn OpCounts,
) -> Result<(), (Option<OpId>, String)> {
    let mut v = Verifier {
        ctx,
        p,
        ops,
        defined: vec![false; p.value_capacity()],
        index: 0,
        counts_fit: FxHashSet::default(),
        facts: FxHashMap::default(),
    };
    v.block(p.top_block())
}

struct Verifier<'a> {
    ctx: &'a Context,
    p: &'a Program,
    ops: &'a dyn OpCounts,
    defined: Vec<bool>,
    /// Position of the current op in print order, for messages.
    index: usize,
    /// (name, operands, results) already found to fit: the table is looked up by name once per
    /// distinct shape of op, not once per op.
    counts_fit: FxHashSet<(Sym, usize, usize)>,
    /// What the caller says of ops by name, asked once per distinct name.
    facts: FxHashMap<Sym, Rc<NameFacts>>,
}

/// What [`OpCounts`] says of the ops of one name: one probe per op finds all of it.
struct NameFacts {
    /// [`OpCounts::buffer_results`].
    buffers: Vec<(usize, usize)>,
    /// [`OpCounts::same_shape`].
    same_shape: Vec<SameShape>,
    /// [`OpCounts::operand_ranks`].
    ranks: Vec<OperandRanks>,
    /// [`OpCounts::operand_check`].
    operand_check: Option<OperandCheck>,
}

impl NameFacts {
    fn of(ops: &dyn OpCounts, name: &str) -> NameFacts {
        NameFacts {
            buffers: ops.buffer_results(name),
            same_shape: ops.same_shape(name),
            ranks: ops.operand_ranks(name),
            operand_check: ops.operand_check(name),
        }
    }
}

impl Verifier<'_> {
    /// An in-place result is its operand's buffer: it has that operand's shape and dtype (a
    /// rule that rewires the operand must retype the result, or refuse). Its distribution may
    /// differ: Paddle's own dumps write a pending sum's buffer and type the result replicated.
    fn buffers_keep_their_types(
        &self,
        op: OpId,
        name: &str,
        facts: &NameFacts,
    ) -> Result<(), (Option<OpId>, String)> {
        let p = self.p;
        for &(r, o) in &facts.buffers {
            let (Some(buf), true) = (p.operand(op, o), r < p.num_results(op)) else {
                continue;
            };
            let (want, got) = (p.value_type(buf), p.value_type(p.result(op, r)));
            let known = |t| t != Context::UNKNOWN_TYPE && t != Context::NULL_TYPE;
            let dense = |t| {
                let t = self.ctx.ty(t);
                (t.shape().map(<[i64]>::to_vec), t.dtype())
            };
            if known(want) && known(got) && want != got && dense(want) != dense(got) {
                let msg = format!(
                    "writes operand {o} in place, so its result {r} is that buffer, of the shape and dtype of `{}`; it is typed `{}`",
                    self.ctx.type_text(want),
                    self.ctx.type_text(got)
                );
                return Err(self.fail(op, name, msg));
            }
        }
        Ok(())
    }

    /// Operands tied by [`OpCounts::same_shape`] have one shape where both are present and
    /// their types known tensors (a `pd_dist.tensor` by its global shape; a dynamic dimension fits
    /// any). Dtypes may differ:
    /// mixed precision pairs a 16-bit parameter with float32 moments or gradient.
    fn operands_share_shapes(
        &self,
        op: OpId,
        name: &str,
        facts: &NameFacts,
    ) -> Result<(), (Option<OpId>, String)> {
        let p = self.p;
        for t in &facts.same_shape {
            let (Some(a), Some(b)) = (p.operand(op, t.operand.0), p.operand(op, t.like.0)) else {
                continue;
            };
            let (ta, tb) = (self.ctx.ty(p.value_type(a)), self.ctx.ty(p.value_type(b)));
            let (Some(sa), Some(sb)) = (ta.shape(), tb.shape()) else {
                continue;
            };
            let differ = sa.len() != sb.len()
                || sa.iter().zip(sb).any(|(&x, &y)| x != y && x >= 0 && y >= 0);
            if differ {
                let msg = format!(
                    "reads its `{}` of type `{}`, whose shape must be that of its `{}` (`{}`)",
                    t.operand.1,
                    self.ctx.type_text(p.value_type(a)),
                    t.like.1,
                    self.ctx.type_text(p.value_type(b))
                );
                return Err(self.fail(op, name, msg));
            }
        }
        Ok(())
    }

    /// Operands limited by [`OpCounts::operand_ranks`] have such a rank where their types are
    /// known tensors.
    fn operands_have_ranks(
        &self,
        op: OpId,
        name: &str,
        facts: &NameFacts,
    ) -> Result<(), (Option<OpId>, String)> {
        let p = self.p;
        for r in &facts.ranks {
            let Some(v) = p.operand(op, r.operand.0) else {
                continue;
            };
            let Some(rank) = self.ctx.ty(p.value_type(v)).shape().map(<[i64]>::len) else {
                continue;
            };
            if rank < r.lowest || rank > r.highest {
                let msg = format!(
                    "reads its `{}` of type `{}`, of rank {rank}: Paddle's kernels take ranks {} to {}",
                    r.operand.1,
                    self.ctx.type_text(p.value_type(v)),
                    r.lowest,
                    r.highest
                );
                return Err(self.fail(op, name, msg));
            }
        }
        Ok(())
    }

    /// The op's operands are ones its result-type rule accepts ([`OpCounts::operand_check`]).
    fn operands_fit(
        &self,
        op: OpId,
        name: &str,
        facts: &NameFacts,
    ) -> Result<(), (Option<OpId>, String)> {
        match facts.operand_check.and_then(|c| c(self.ctx, self.p, op)) {
            Some(msg) => Err(self.fail(op, name, msg)),
            None => Ok(()),
        }
    }

    fn fail(&self, op: OpId, op_name: &str, msg: String) -> (Option<OpId>, String) {
        (
            Some(op),
            format!("`{op_name}` (op #{} in print order) {msg}", self.index),
        )
    }

    fn value_name(&self, v: ValueId) -> String {
        match self.p.value_def(v) {
            super::ValueDef::Kwarg { block, index } => {
                format!(
                    "%kwarg_{}",
                    self.ctx
                        .str(self.p.block_kwargs(block)[index as usize].name)
                )
            }
            super::ValueDef::Arg { index, .. } => format!("block argument {index}"),
            super::ValueDef::Result { op, index } => {
                format!("result {index} of a `{}`", self.ctx.str(self.p.op_name(op)))
            }
        }
    }

    /// `pd_op.if` and `pd_op.while` give their results through the `cf.yield` ending each of
    /// their blocks: an `if` block yields one value per result (none needed without results),
    /// a `while` body yields its next condition and then one value per result; the types of
    /// yielded values are the results' (where both are known). Other region ops are unknown
    /// to irw and kept as written.
    fn region_yields(&self, op: OpId, name: &str) -> Result<(), (Option<OpId>, String)> {
        let p = self.p;
        let skip = match name {
            "pd_op.if" => 0,
            "pd_op.while" => 1,
            _ => return Ok(()),
        };
        let results: Vec<ValueId> = p.results(op).collect();
        let known = |t| t != Context::UNKNOWN_TYPE && t != Context::NULL_TYPE;
        for &r in p.regions(op) {
            for &inner in p.region_blocks(r) {
                let last = p.block_ops(inner).last();
                let y = match last {
                    Some(y) if self.ctx.str(p.op_name(y)) == YIELD => y,
                    _ if skip == 0 && results.is_empty() => continue,
                    _ => {
                        return Err(self.fail(
                            op,
                            name,
                            "has a block that does not end with `cf.yield`".into(),
                        ))
                    }
                };
                let ys: Vec<Option<ValueId>> = p.operands(y).collect();
                if ys.len() != results.len() + skip {
                    return Err(self.fail(
                        y,
                        YIELD,
                        format!(
                            "yields {} values; its `{name}` needs {}",
                            ys.len(),
                            results.len() + skip
                        ),
                    ));
                }
                for (i, (&res, v)) in results.iter().zip(&ys[skip..]).enumerate() {
                    let Some(v) = *v else { continue };
                    let (want, got) = (p.value_type(res), p.value_type(v));
                    let dense = |t| {
                        let t = self.ctx.ty(t);
                        (t.shape().map(<[i64]>::to_vec), t.dtype())
                    };
                    if known(want) && known(got) && want != got && dense(want) != dense(got) {
                        return Err(self.fail(
                            y,
                            YIELD,
                            format!(
                                "yields a `{}` for result {i} of its `{name}`, which is a `{}`",
                                self.ctx.type_text(got),
                                self.ctx.type_text(want)
                            ),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    fn block(&mut self, b: BlockId) -> Result<(), (Option<OpId>, String)> {
        let p = self.p;
        let mut names = FxHashSet::default();
        for k in p.block_kwargs(b) {
            if !names.insert(k.name) {
                return Err((
                    None,
                    format!("duplicate keyword argument %kwarg_{}", self.ctx.str(k.name)),
                ));
            }
            self.defined[k.value.index()] = true;
        }
        for a in p.block_args(b) {
            self.defined[a.value.index()] = true;
        }
        for op in p.block_ops(b) {
            let name = self.ctx.str(p.op_name(op));
            let syntax = p.op(op).syntax();
            for v in p.operands(op).flatten() {
                if !self.defined[v.index()] {
                    return Err(self.fail(
                        op,
                        name,
                        format!(
                            "uses {} before it is defined, or outside its region",
                            self.value_name(v)
                        ),
                    ));
                }
                if syntax == OpSyntax::Plain && p.value_type(v) == Context::UNKNOWN_TYPE {
                    return Err(self.fail(
                        op,
                        name,
                        format!("uses {} whose type is not known", self.value_name(v)),
                    ));
                }
            }
            let counts = (p.op_name(op), p.num_operands(op), p.num_results(op));
            if !self.counts_fit.contains(&counts) {
                if let Err(msg) = self.ops.check_counts(name, counts.1, counts.2) {
                    return Err(self.fail(op, name, msg));
                }
                self.counts_fit.insert(counts);
            }
            let ops = self.ops;
            let facts = Rc::clone(
                self.facts
                    .entry(p.op_name(op))
                    .or_insert_with(|| Rc::new(NameFacts::of(ops, name))),
            );
            self.buffers_keep_their_types(op, name, &facts)?;
            self.operands_share_shapes(op, name, &facts)?;
            self.operands_have_ranks(op, name, &facts)?;
            self.operands_fit(op, name, &facts)?;
            if name == YIELD && p.block_parent_op(b).is_none() {
                return Err(self.fail(
                    op,
                    name,
                    "is outside any region: `cf.yield` ends a region's block".into(),
                ));
            }
            if name == YIELD && p.next_op(op).is_some() {
                return Err(self.fail(
                    op,
                    name,
                    "is not the last op of its block: `cf.yield` ends a region's block".into(),
                ));
            }
            self.index += 1;
            for &r in p.regions(op) {
                for &inner in p.region_blocks(r) {
                    self.block(inner)?;
                }
            }
            self.region_yields(op, name)?;
            for r in p.results(op) {
                self.defined[r.index()] = true;
            }
        }
        // Values defined in a nested block are not visible after it.
        if p.block_parent_op(b).is_some() {
            for op in p.block_ops(b) {
                for r in p.results(op) {
                    self.defined[r.index()] = false;
                }
            }
            for a in p.block_args(b) {
                self.defined[a.value.index()] = false;
            }
            for k in p.block_kwargs(b) {
                self.defined[k.value.index()] = false;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{verify_module, OpCounts};
    use crate::ir::parse_module;
    use crate::SourceFile;

    /// Knows one op: `t.unary` takes one operand (the dialect's table is tested in the dialect).
    struct OneOp;

    impl OpCounts for OneOp {
        fn check_counts(&self, name: &str, operands: usize, _: usize) -> Result<(), String> {
            match name {
                "t.unary" if operands != 1 => Err(format!("has {operands} operands")),
                _ => Ok(()),
            }
        }
    }

    fn check(text: &str) -> Result<(), String> {
        let m = parse_module(&SourceFile::new("t.ir", text)).map_err(|d| d.to_string())?;
        verify_module(&m, &OneOp).map_err(|e| e.to_diagnostic(&m, None).to_string())
    }

    #[test]
    fn a_value_from_an_ended_region_is_rejected() {
        let text = "{\n    (%0) = \"pd_op.full\" () {} : () -> tensor<b>\n    (%1) = \"pd_op.if\" (%0) {} -> tensor<f32> {\n        (%2) = \"pd_op.full\" () {} : () -> tensor<f32>\n        () = \"cf.yield\" (%2) {} : (tensor<f32>) -> \n    } else {\n        () = \"cf.yield\" (%2) {} : (tensor<f32>) -> \n    }\n}\n";
        let e = check(text).unwrap_err();
        assert!(
            e.contains("before it is defined, or outside its region"),
            "{e}"
        );
    }

    #[test]
    fn op_counts_are_what_the_caller_says() {
        let text = "{\n    (%0) = \"pd_op.full\" () {} : () -> tensor<f32>\n    (%1) = \"t.unary\" (%0, %0) {} : (tensor<f32>, tensor<f32>) -> tensor<f32>\n}\n";
        let e = check(text).unwrap_err();
        assert!(
            e.contains("`t.unary` (op #1 in print order) has 2 operands"),
            "{e}"
        );
    }
}
