//! What a rule sees of the program while it is matched and applied: bindings, program queries
//! (`name`, `dtype`, `uses`, ...), and the [`Env`] the shared expression evaluator uses.
//!
//! Matching runs once per candidate op of a 10^5-op program, so what it touches on every attempt
//! is kept allocation-free: bindings are a vector indexed by the slots the rule was lowered with
//! (`rules::compiled`), and an op's stage and effect class come from [`Caches`] indexed by
//! interned ids instead of a string-keyed lookup in the op's attribute dictionary.

use super::matcher::{Compiled, Memo, Searcher, Selectors};
use crate::dialect::ROLE_ATTR;
use crate::dialect::{Dialect, Effect};
use crate::ir::{Attr, AttrId, Module, OpId, Sym, Type, ValueDef, ValueId};
use crate::rules::builtins::Query;
use crate::rules::compiled::Exists;
use crate::rules::compiled::{Slot, ValueRef};
use crate::rules::eval::Env;
use crate::rules::{RuleSet, Span, Val};
use crate::value::operators::{err, EvalResult};
use std::rc::Rc;

/// What a match bound, by slot: `%x` to values or ops, `$x` to constants.
///
/// Backtracking undoes bindings instead of copying them: every [`Bindings::set`] records the
/// slot's previous content on a trail, and [`Bindings::undo`] restores everything set since a
/// [`Bindings::mark`]. A candidate that fails costs what it bound, not a copy of the match; a
/// copy is made only for a complete match ([`Bindings::snapshot`]).
#[derive(Debug)]
pub struct Bindings {
    slots: Vec<Option<Val>>,
    trail: Vec<(Slot, Option<Val>)>,
}

/// A point of a [`Bindings`]' trail to undo back to.
#[derive(Copy, Clone, Debug)]
pub struct Mark(usize);

impl Bindings {
    /// Nothing bound, room for a rule's `slots`.
    pub fn new(slots: usize) -> Self {
        Bindings {
            slots: vec![None; slots],
            trail: Vec::new(),
        }
    }

    /// Nothing bound, room for `slots`, keeping the memory already allocated. Every slot was
    /// empty after the last reset and only [`Bindings::set`] fills one, so undoing the trail
    /// empties them again: a search that bound little costs little to forget, however many
    /// slots its rule has (a root is searched hundreds of thousands of times).
    pub fn reset(&mut self, slots: usize) {
        self.undo(Mark(0));
        self.slots.resize(slots, None);
    }

    /// What slot `s` is bound to.
    #[inline]
    pub fn get(&self, s: Slot) -> Option<&Val> {
        self.slots.get(s as usize).and_then(Option::as_ref)
    }

    #[inline]
    pub fn set(&mut self, s: Slot, v: Val) {
        let i = s as usize;
        if i >= self.slots.len() {
            self.slots.resize(i + 1, None);
        }
        let old = self.slots[i].replace(v);
        self.trail.push((s, old));
    }

    /// The current point of the trail.
    pub fn mark(&self) -> Mark {
        Mark(self.trail.len())
    }

    /// Restores every slot set since `mark`, latest first.
    pub fn undo(&mut self, mark: Mark) {
        while self.trail.len() > mark.0 {
            if let Some((s, old)) = self.trail.pop() {
                self.slots[s as usize] = old;
            }
        }
    }

    /// A copy of what is bound, without the trail: the bindings of a complete match.
    pub fn snapshot(&self) -> Bindings {
        Bindings {
            slots: self.slots.clone(),
            trail: Vec::new(),
        }
    }
}

/// [`Caches::role`]: a dictionary without a role.
const NO_ROLE: i32 = i32::MIN;
/// [`Caches::role`]: a role outside `i32`, read from the dictionary each time.
const ROLE_TOO_WIDE: i32 = i32::MAX;

/// Per-run lookups keyed by interned ids: the `op_role` of each attribute dictionary and the
/// effect class of each op name. Both tables grow lazily, because rules intern new
/// dictionaries and names while they run; an entry never changes once computed (interned
/// dictionaries and names are immutable).
#[derive(Debug, Default)]
pub struct Caches {
    /// The role of each interned dictionary: [`NO_ROLE`], [`ROLE_TOO_WIDE`] or the role (a
    /// program has hundreds of thousands of dictionaries: 4 bytes each rather than 16).
    roles: Vec<i32>,
    effects: Vec<Option<Effect>>,
    /// `--timeout`'s deadline, checked by the matcher every few thousand candidates (one op
    /// read by hundreds of others can give a multi-pattern rule billions of combinations).
    pub deadline: Option<std::time::Instant>,
    /// Set when the matcher stopped at the deadline; the engine reports it.
    pub timed_out: bool,
    steps: u32,
    /// By `exists(...)` id ([`Exists::id`]): its selectors interned in this run's module
    /// ([`Selectors`]), once it was evaluated (a guard evaluated once per match would intern
    /// them again every time).
    pub exists: Vec<Option<Rc<Selectors>>>,
    /// The matched ops and operand positions of an `exists` search, reused from one
    /// evaluation to the next.
    pub exists_scratch: (Vec<Option<OpId>>, Vec<u32>),
    /// The same for a rule's search from its root ([`Searcher::find`]).
    pub find_scratch: (Vec<Option<OpId>>, Vec<u32>),
    /// Candidate lists of the matcher's steps, reused: one is taken per step being searched
    /// (steps nest, so it is a pool rather than one list).
    pub op_lists: Vec<Vec<OpId>>,
    /// The ops carrying the markers plans reach patterns by ([`crate::rules::compiled::Reach::Marked`]).
    pub marked: super::marked::MarkedIndex,
}

impl Caches {
    /// Empty caches for a rule set with `exists` of them ([`crate::rules::RuleSet::exists`]).
    pub fn new(exists: usize) -> Caches {
        Caches {
            exists: std::iter::repeat_with(|| None).take(exists).collect(),
            ..Caches::default()
        }
    }

    /// One matching step: whether the deadline still lies ahead (checked every 1024 steps).
    pub fn tick(&mut self) -> bool {
        if self.timed_out {
            return false;
        }
        self.steps = self.steps.wrapping_add(1);
        if self.steps.is_multiple_of(1024)
            && self
                .deadline
                .is_some_and(|d| std::time::Instant::now() >= d)
        {
            self.timed_out = true;
        }
        !self.timed_out
    }

    /// The op role of `op`, if it has one.
    #[inline]
    pub fn role(&mut self, m: &Module, op: OpId) -> Option<i64> {
        let id = m.main.op_attrs(op).0 as usize;
        match self.roles.get(id) {
            Some(&NO_ROLE) => None,
            Some(&ROLE_TOO_WIDE) => role_of(m, AttrId(id as u32)),
            Some(&r) => Some(i64::from(r)),
            None => self.role_of_new(m, id),
        }
    }

    /// [`Caches::role`] of a dictionary interned since the table was last extended: the
    /// table grows to every dictionary interned so far.
    #[cold]
    fn role_of_new(&mut self, m: &Module, id: usize) -> Option<i64> {
        let n = m.ctx.interned_counts().1.max(id + 1);
        for i in self.roles.len()..n {
            self.roles.push(match role_of(m, AttrId(i as u32)) {
                None => NO_ROLE,
                Some(r) => i32::try_from(r)
                    .ok()
                    .filter(|r| ![NO_ROLE, ROLE_TOO_WIDE].contains(r))
                    .unwrap_or(ROLE_TOO_WIDE),
            });
        }
        role_of(m, AttrId(id as u32))
    }

    /// The effect class of `op`'s name in the dialect table.
    pub fn effect(&mut self, m: &Module, op: OpId) -> Effect {
        self.effect_of_name(m, m.main.op_name(op))
    }

    /// The effect class of the op name `s` in the dialect table.
    pub fn effect_of_name(&mut self, m: &Module, s: Sym) -> Effect {
        let i = s.0 as usize;
        if i >= self.effects.len() {
            self.effects.resize(i + 1, None);
        }
        *self.effects[i].get_or_insert_with(|| Dialect::get().effect(m.ctx.str(s)))
    }
}

/// The `op_role` the dictionary `id` holds, read from the dictionary.
fn role_of(m: &Module, id: AttrId) -> Option<i64> {
    m.ctx.attrs(id).get(ROLE_ATTR).and_then(Attr::as_i64)
}

/// The value a `Val` denotes in operand position: an op means its first result.
pub fn as_value(m: &Module, v: &Val) -> Option<Option<ValueId>> {
    match v {
        Val::Value(v) => Some(Some(*v)),
        Val::NullValue => Some(None),
        Val::Op(o) if m.main.num_results(*o) > 0 => Some(Some(m.main.result(*o, 0))),
        _ => None,
    }
}

/// The op a `Val` denotes in op position: a value means its defining op.
pub fn as_op(m: &Module, v: &Val) -> Option<OpId> {
    match v {
        Val::Op(o) => Some(*o),
        Val::Value(v) => m.main.defining_op(*v),
        _ => None,
    }
}

/// The evaluator's view of one match.
pub struct RtEnv<'a> {
    pub m: &'a mut Module,
    pub rules: &'a RuleSet,
    pub b: &'a mut Bindings,
    pub cache: &'a mut Caches,
}

impl Env for RtEnv<'_> {
    fn value(&mut self, r: &ValueRef) -> EvalResult {
        let (name, span) = (&r.name, r.span);
        let Some(v) = self.b.get(r.slot) else {
            return err(span, format!("`{name}` is not bound"));
        };
        match (v, &r.field) {
            (v, None) => Ok(v.clone()),
            (Val::Op(o), Some(field)) => {
                let o = *o;
                let f = &field.text;
                let idx = match field.index {
                    Some(i) => Some(i),
                    None => {
                        let n = self.m.ctx.str(self.m.main.op_name(o));
                        self.rules.ops.spec(n).and_then(|s| s.result_index(f))
                    }
                };
                match idx {
                    Some(i) if i < self.m.main.num_results(o) => {
                        Ok(Val::Value(self.m.main.result(o, i)))
                    }
                    _ => err(
                        span,
                        format!("the op bound to `{name}` has no result `{f}`"),
                    ),
                }
            }
            (_, Some(f)) => err(
                span,
                format!("`{name}` is a value; it has no result `{}`", f.text),
            ),
        }
    }

    fn capture(&self, slot: Slot) -> Option<Val> {
        self.b.get(slot).cloned()
    }

    fn text(&self, v: &Val) -> String {
        match v {
            Val::Type(t) => self.m.ctx.type_text(*t).to_string(),
            Val::Op(o) => self.m.ctx.str(self.m.main.op_name(*o)).to_string(),
            Val::List(items) => {
                let items: Vec<String> = items.iter().map(|x| self.text(x)).collect();
                format!("[{}]", items.join(","))
            }
            _ => v.display(),
        }
    }

    fn query(&mut self, func: Query, args: &[Val], span: Span) -> Option<EvalResult> {
        query(self.m, self.cache, &self.rules.ops, func, args, span)
    }

    fn exists(&mut self, x: &Exists) -> EvalResult {
        let sel = match self.cache.exists.get(x.id).and_then(Option::as_ref) {
            Some(sel) => Rc::clone(sel),
            None => {
                let sel = Rc::new(Selectors::new(self.m, &x.patterns));
                if x.id >= self.cache.exists.len() {
                    self.cache.exists.resize_with(x.id + 1, || None);
                }
                self.cache.exists[x.id] = Some(Rc::clone(&sel));
                sel
            }
        };
        let c = Compiled::with_selectors(&x.patterns, &x.plan, sel);
        let memo = Memo::default();
        let mut s = Searcher {
            m: self.m,
            rules: self.rules,
            c: &c,
            memo: &memo,
            cache: self.cache,
            rule_index: usize::MAX,
            matches: 0,
        };
        // The match's bindings seed the search; what the patterns bind is undone after it.
        Ok(Val::Bool(s.exists(self.b)?))
    }
}

/// `written(%v)`: whether some op may write `v` in place: an op whose entry in the dialect
/// table (or a rule file's declaration) makes a result the operand holding `v` (`scale_`,
/// `add_`, an optimizer's parameter, an in-place collective), or an op irw does not know, which
/// may write whatever it reads. A rule that makes two values one tensor (drops a copy) is sound
/// only when neither is written.
pub fn written(m: &Module, ops: &crate::rules::decl::OpTable, v: ValueId) -> bool {
    m.main
        .uses(v)
        .any(|u| match ops.spec(m.ctx.str(m.main.op_name(u.op))) {
            Some(spec) => spec.writes_operand(u.index as usize),
            None => true,
        })
}

/// `uses(%v)`, or with a stage `uses(%v in STAGE)`: the uses of `v` by ops of that stage (an op
/// using `v` twice counts twice, in either form).
pub fn use_count(m: &Module, cache: &mut Caches, v: ValueId, stage: Option<i64>) -> usize {
    match stage {
        Some(s) => m
            .main
            .uses(v)
            .filter(|u| cache.role(m, u.op) == Some(s))
            .count(),
        None => m.main.num_uses(v),
    }
}

/// The stage (`op_role`) of the op `v` names, or of the op defining the value `v`; -1 for an
/// absent operand, a value no op defines, an op without a role, or anything else.
pub fn stage_of(m: &Module, cache: &mut Caches, v: &Val) -> i64 {
    let op = match v {
        Val::Op(o) => Some(*o),
        Val::Value(x) => m.main.defining_op(*x),
        _ => None,
    };
    op.and_then(|o| cache.role(m, o)).unwrap_or(-1)
}

/// A program query over evaluated arguments; `None`
/// for one the structural engine does not answer (`const`, an e-graph query).
fn query(
    m: &mut Module,
    cache: &mut Caches,
    ops: &crate::rules::decl::OpTable,
    func: Query,
    args: &[Val],
    span: Span,
) -> Option<EvalResult> {
    use Query as B;
    let name = func.name();
    let value_arg = |m: &Module| -> Result<ValueId, crate::value::operators::EvalError> {
        match args.first().and_then(|a| as_value(m, a)) {
            Some(Some(v)) => Ok(v),
            Some(None) => err(span, format!("`{name}` of an absent operand")),
            None => err(span, format!("`{name}` needs a value")),
        }
    };
    let op_arg = |m: &Module| -> Result<OpId, crate::value::operators::EvalError> {
        match args.first().and_then(|a| as_op(m, a)) {
            Some(o) => Ok(o),
            None => err(span, format!("`{name}` needs an op or a value")),
        }
    };
    Some(match func {
        B::Name => value_arg(m).map(|v| Val::Str(value_name(m, v))),
        B::DType | B::Shape | B::Rank => (|| {
            let v = value_arg(m)?;
            let ty = m.ctx.ty(m.main.value_type(v));
            let Some((shape, dtype)) = ty.tensor() else {
                return err(
                    span,
                    format!(
                        "`{name}`: the value's type `{}` is not a tensor",
                        m.ctx.type_text(m.main.value_type(v))
                    ),
                );
            };
            Ok(match func {
                B::DType => Val::DType(dtype),
                B::Shape => Val::List(shape.iter().map(|d| Val::Int(*d)).collect()),
                _ => Val::Int(shape.len() as i64),
            })
        })(),
        B::ProcessIds | B::MeshShape | B::DimsMapping | B::Placements => (|| {
            let v = value_arg(m)?;
            let ints = |xs: &[i64]| Val::List(xs.iter().map(|&i| Val::Int(i)).collect());
            let Some(d) = m.ctx.ty(m.main.value_type(v)).dist() else {
                return Ok(Val::List(Vec::new()));
            };
            Ok(match func {
                B::ProcessIds => ints(&d.process_ids),
                B::MeshShape => ints(&d.mesh_shape),
                B::DimsMapping => ints(&d.dims_mapping),
                _ => Val::List(
                    d.placements
                        .iter()
                        .flatten()
                        .map(|p| {
                            let mut s = String::new();
                            p.write_to(&mut s);
                            Val::Str(s)
                        })
                        .collect(),
                ),
            })
        })(),
        B::Type => value_arg(m).map(|v| Val::Type(m.main.value_type(v))),
        B::Uses => value_arg(m).map(|v| {
            let stage = match args.get(1) {
                Some(Val::Stage(s)) => Some(*s),
                _ => None,
            };
            Val::Int(use_count(m, cache, v, stage) as i64)
        }),
        B::Role => Ok(Val::Int(args.first().map_or(-1, |v| stage_of(m, cache, v)))),
        B::Written => match args.first().and_then(|a| as_value(m, a)) {
            Some(Some(v)) => Ok(Val::Bool(written(m, ops, v))),
            // An absent operand holds nothing to write.
            Some(None) => Ok(Val::Bool(false)),
            None => value_arg(m).map(|_| Val::Bool(false)),
        },
        // An op is unused when none of its results is; a value (a result field, an operand,
        // a keyword argument, a block argument) when it has no use.
        B::Unused => match args.first() {
            Some(Val::Op(o)) => Ok(Val::Bool(!m.main.results(*o).any(|r| m.main.has_uses(r)))),
            Some(Val::Value(_) | Val::NullValue) => {
                value_arg(m).map(|v| Val::Bool(!m.main.has_uses(v)))
            }
            // Neither an op nor a value: `op_arg`'s error says what it takes.
            _ => op_arg(m).map(|o| Val::Bool(!m.main.results(o).any(|r| m.main.has_uses(r)))),
        },
        // A value no op defines is nested when its block is a region's: a block argument of a
        // `while` body is, a keyword argument of the program is not.
        B::Nested => match args.first().map(|a| (a, as_op(m, a))) {
            Some((_, Some(o))) => Ok(Val::Bool(
                m.main
                    .op_block(o)
                    .is_some_and(|bk| m.main.block_parent_op(bk).is_some()),
            )),
            Some((Val::Value(v), None)) => Ok(Val::Bool(match m.main.value_def(*v) {
                ValueDef::Kwarg { block, .. } | ValueDef::Arg { block, .. } => {
                    m.main.block_parent_op(block).is_some()
                }
                ValueDef::Result { .. } => false,
            })),
            _ => op_arg(m).map(|_| Val::Bool(false)),
        },
        // No op defines a keyword argument or a block argument: it has no op name (the empty
        // string, so `op_name(%g) != "pd_op.cast"` holds) and no attribute.
        B::OpName => match args.first() {
            Some(Val::Value(v)) if m.main.defining_op(*v).is_none() => Ok(Val::Str(String::new())),
            _ => op_arg(m).map(|o| Val::Str(m.ctx.str(m.main.op_name(o)).to_string())),
        },
        B::HasAttr | B::Attr => (|| {
            let Some(Val::Str(key)) = args.get(1) else {
                return err(span, format!("`{name}` needs an attribute name"));
            };
            if let Some(Val::Value(v)) = args.first() {
                if m.main.defining_op(*v).is_none() {
                    if func == B::HasAttr {
                        return Ok(Val::Bool(false));
                    }
                    return err(
                        span,
                        format!(
                            "`attr` of {}, which no op defines, so it has no attribute `{key}`",
                            undefined_kind(m, *v)
                        ),
                    );
                }
            }
            let o = op_arg(m)?;
            let a = m.ctx.attrs(m.main.op_attrs(o)).get(key).cloned();
            if func == B::HasAttr {
                return Ok(Val::Bool(a.is_some()));
            }
            match a {
                Some(a) => Ok(Val::from_attr(&a)),
                None => err(span, format!("the op has no attribute `{key}`")),
            }
        })(),
        B::Tensor => (|| {
            let (Some(Val::List(dims)), Some(Val::DType(d))) = (args.first(), args.get(1)) else {
                return err(span, "`tensor` takes a shape list and a dtype");
            };
            let shape: Option<Vec<i64>> = dims
                .iter()
                .map(|x| if let Val::Int(i) = x { Some(*i) } else { None })
                .collect();
            let Some(shape) = shape else {
                return err(span, "`tensor`: the shape must be a list of ints");
            };
            Ok(Val::Type(
                m.ctx.intern_type(Type::Tensor { shape, dtype: *d }),
            ))
        })(),
        // `const(%x)` is an e-graph query (the checker refuses it in structural rules).
        B::Const => return None,
    })
}

/// What a value no op defines is, in words: `a keyword argument` or `a block argument`.
fn undefined_kind(m: &Module, v: ValueId) -> String {
    match m.main.value_def(v) {
        ValueDef::Kwarg { block, index } => format!(
            "the keyword argument `{}`",
            m.ctx.str(m.main.block_kwargs(block)[index as usize].name)
        ),
        _ => "a block argument".to_string(),
    }
}

/// The name a value is known by: a keyword argument's name, or the name attribute of the op
/// that defines it (`builtin.parameter` → its `parameter_name`); empty for anonymous values.
pub fn value_name(m: &Module, v: ValueId) -> String {
    match m.main.value_def(v) {
        ValueDef::Kwarg { block, index } => m
            .ctx
            .str(m.main.block_kwargs(block)[index as usize].name)
            .to_string(),
        ValueDef::Result { op, .. } => {
            let d = m.ctx.attrs(m.main.op_attrs(op));
            crate::dialect::protocol::SCOPE_NAME_ATTRS
                .iter()
                .find_map(|k| d.get(k).and_then(|a| a.as_str().map(|s| s.into_owned())))
                .unwrap_or_default()
        }
        ValueDef::Arg { .. } => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reset forgets every binding, also those of a search that ended without undoing them
    /// (a complete match), of slots beyond the new count, and of slots `set` grew.
    #[test]
    fn a_reset_forgets_every_binding() {
        let mut b = Bindings::new(3);
        b.set(0, Val::Int(1));
        let mark = b.mark();
        b.set(2, Val::Str("undone".into()));
        b.set(5, Val::Int(2));
        b.undo(mark);
        assert_eq!(b.get(0), Some(&Val::Int(1)));
        assert_eq!(b.get(2), None);
        b.set(1, Val::Bool(true));
        b.reset(4);
        assert!((0..8).all(|s| b.get(s).is_none()));
        b.set(3, Val::Int(3));
        b.reset(2);
        b.reset(6);
        assert!((0..8).all(|s| b.get(s).is_none()));
    }
}
