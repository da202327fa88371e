//! Matching a structural rule's patterns (a DAG of op patterns sharing variables) at a root op.
//!
//! The patterns are found in the order of the rule's match plan ([`Step`], made when the rule
//! was lowered: `rules/plan.rs`): the first at the root, every other one from what is already
//! bound, through the defining op of a bound value (`%r` bound as an operand, then
//! `%r = c_allreduce_sum(...)`) or through the use list of a bound value (`pd_op.add_(%m, %r)`
//! found among the users of `%r`). The matcher executes the steps and decides nothing about
//! the order itself. Nested patterns are matched on the defining op of the operand in place.
//! Backtracking enumerates every combination until one passes the guards and has not been
//! applied before.

use super::guard::Test;
use super::runtime::{as_value, Bindings, Caches, RtEnv};
use crate::dialect::Effect;
use crate::ir::{AttrId, Module, OpId, Sym};
use crate::rules::compiled::Expr;
use crate::rules::compiled::{
    AltTest, AttrTest, CompiledRule, OpSel, Pattern, Reach, Step, ValPat,
};
use crate::rules::eval::eval;
use crate::rules::{OpClass, RuleSet, Val};
use crate::value::operators::EvalError;
use rustc_hash::FxHashSet;
use std::cell::RefCell;
use std::rc::Rc;

/// Which ops a selector accepts, with its op names interned in this run's module.
#[derive(Debug, Clone)]
enum Accept {
    Any,
    Names(Vec<Sym>),
    Class(Effect),
    Union(Vec<Accept>),
    /// An alternative with attribute tests.
    With(Box<Accept>, Vec<(String, AltTest)>),
}

fn passes(test: &AltTest, have: Option<&crate::ir::Attr>) -> bool {
    match (test, have) {
        (AltTest::Present, h) => h.is_some(),
        (AltTest::Absent, h) => h.is_none(),
        (AltTest::Equals(_), None) => false,
        (AltTest::Equals(want), Some(a)) => attr_equals(a, want),
    }
}

/// `{key: want}` on attribute `a`: equal as rules compare values; a flag written `[true]` also
/// equals `true`.
pub(super) fn attr_equals(a: &crate::ir::Attr, want: &Val) -> bool {
    use crate::ir::Attr;
    // The common tests (`{flag: true}`, `{op_role: 2}`) without converting the attribute.
    match (a, want) {
        (Attr::Bool(x), Val::Bool(y)) => return x == y,
        (Attr::Int(x), Val::Int(y)) => return x == y,
        _ => {}
    }
    let got = Val::from_attr(a);
    let scalar_eq = match &got {
        Val::List(v) if v.len() == 1 => v[0].loose_eq(want),
        _ => false,
    };
    got.loose_eq(want) || scalar_eq
}

impl Accept {
    pub fn compile(m: &mut Module, sel: &OpSel) -> Accept {
        match sel {
            OpSel::Name(n) => Accept::Names(vec![m.ctx.sym(n)]),
            OpSel::Class(OpClass::Any) => Accept::Any,
            OpSel::Class(OpClass::Effect(e)) => Accept::Class(*e),
            OpSel::OneOf(v) => Accept::Union(v.iter().map(|s| Accept::compile(m, s)).collect()),
            OpSel::With(sel, tests) => {
                Accept::With(Box::new(Accept::compile(m, sel)), tests.clone())
            }
        }
    }

    /// Whether the selector tests attributes anywhere (an alternative with attribute tests).
    fn tests_attrs(&self) -> bool {
        match self {
            Accept::Any | Accept::Names(_) | Accept::Class(_) => false,
            Accept::Union(v) => v.iter().any(Accept::tests_attrs),
            Accept::With(..) => true,
        }
    }

    /// Whether some op named `name` may be accepted: everything but the attribute tests of
    /// alternatives, which depend on the op (the rule index of the worklist asks this once per
    /// op name, then [`Accept::accepts`] decides per op).
    fn may_accept_name(&self, m: &Module, cache: &mut Caches, name: Sym) -> bool {
        match self {
            Accept::Any => true,
            Accept::Names(n) => n.contains(&name),
            Accept::Class(e) => cache.effect_of_name(m, name) == *e,
            Accept::Union(v) => v.iter().any(|a| a.may_accept_name(m, cache, name)),
            Accept::With(inner, _) => inner.may_accept_name(m, cache, name),
        }
    }

    pub fn accepts(&self, m: &Module, cache: &mut Caches, op: OpId) -> bool {
        match self {
            Accept::Any => true,
            Accept::Names(n) => n.contains(&m.main.op_name(op)),
            Accept::Class(e) => cache.effect(m, op) == *e,
            Accept::Union(v) => v.iter().any(|a| a.accepts(m, cache, op)),
            Accept::With(inner, tests) => {
                inner.accepts(m, cache, op) && {
                    let attrs = m.ctx.attrs(m.main.op_attrs(op));
                    tests.iter().all(|(k, t)| passes(t, attrs.get(k)))
                }
            }
        }
    }
}

/// The selectors of a list of patterns, interned in one module.
///
/// What a selector says of an op name, and where a node's named operands are on ops of that
/// name, are remembered by name (a matcher tries the same few names hundreds of thousands of
/// times): one vector lookup per node instead of walking alternatives, and comparing operand
/// names, at every candidate op.
#[derive(Debug)]
pub struct Selectors {
    /// One selector per pattern node, in pre-order (a pattern, then its nested patterns).
    accepts: Vec<Accept>,
    /// Pre-order index of each top-level pattern in `accepts`.
    starts: Vec<usize>,
    /// Per node: whether its selector tests attributes (then a name it accepts is a
    /// pre-filter, and the op is tested in full).
    with_attrs: Vec<bool>,
    /// Per node, by op name (`Sym` index): 0 not asked yet, 1 accepted, 2 refused.
    by_name: Vec<RefCell<Vec<u8>>>,
    /// Per node, for the op names met: the operand index each of its arguments names
    /// (`u32::MAX`: an argument without a name, or a name the op does not have).
    operands: Vec<RefCell<Vec<OperandIndices>>>,
}

/// For ops of one name: the operand index each argument of a pattern node names.
type OperandIndices = (Sym, Box<[u32]>);

impl Selectors {
    /// The selectors of `patterns`, interned in `m`.
    pub fn new(m: &mut Module, patterns: &[Pattern]) -> Selectors {
        fn walk(m: &mut Module, p: &Pattern, out: &mut Vec<Accept>) {
            out.push(Accept::compile(m, &p.op));
            for a in &p.args {
                if let ValPat::Op(inner) = &a.pat {
                    walk(m, inner, out);
                }
            }
        }
        let mut accepts = Vec::new();
        let mut starts = Vec::new();
        for p in patterns {
            starts.push(accepts.len());
            walk(m, p, &mut accepts);
        }
        let n = accepts.len();
        Selectors {
            with_attrs: accepts.iter().map(Accept::tests_attrs).collect(),
            accepts,
            starts,
            by_name: (0..n).map(|_| RefCell::new(Vec::new())).collect(),
            operands: (0..n).map(|_| RefCell::new(Vec::new())).collect(),
        }
    }

    /// Whether node `node`'s selector accepts `op` ([`Accept::accepts`]).
    fn accepts(&self, node: usize, m: &Module, cache: &mut Caches, op: OpId) -> bool {
        self.accepts_name(node, m, cache, m.main.op_name(op))
            && (!self.with_attrs[node] || self.accepts[node].accepts(m, cache, op))
    }

    /// Whether node `node`'s selector may accept ops named `name` ([`Accept::may_accept_name`]).
    fn accepts_name(&self, node: usize, m: &Module, cache: &mut Caches, name: Sym) -> bool {
        let mut known = self.by_name[node].borrow_mut();
        let i = name.0 as usize;
        if i >= known.len() {
            known.resize(i + 1, 0);
        }
        if known[i] == 0 {
            known[i] = if self.accepts[node].may_accept_name(m, cache, name) {
                1
            } else {
                2
            };
        }
        known[i] == 1
    }

    /// The operand index argument `arg` of node `node` (pattern `pat`) names on an op called
    /// `name`, whose dialect entry is found with `rules`; `None` when the op has no such operand.
    fn operand_index(
        &self,
        node: usize,
        pat: &Pattern,
        arg: usize,
        m: &Module,
        rules: &RuleSet,
        name: Sym,
    ) -> Option<usize> {
        let mut known = self.operands[node].borrow_mut();
        let k = match known.iter().position(|(s, _)| *s == name) {
            Some(k) => k,
            None => {
                let spec = rules.ops.spec(m.ctx.str(name));
                let idx = pat
                    .args
                    .iter()
                    .map(|a| {
                        a.operand
                            .as_ref()
                            .and_then(|n| spec?.operand_index(n))
                            .map_or(u32::MAX, |i| i as u32)
                    })
                    .collect();
                known.push((name, idx));
                known.len() - 1
            }
        };
        match known[k].1[arg] {
            u32::MAX => None,
            i => Some(i as usize),
        }
    }
}

/// A rule (or the patterns of an `exists(...)` guard) prepared for matching in one module:
/// its selectors with their op names interned.
pub struct Compiled<'r> {
    pub patterns: &'r [Pattern],
    /// The order the patterns are found in.
    plan: &'r [Step],
    sel: Rc<Selectors>,
    pub guards: &'r [Expr],
    /// The guards compiled for testing matches, one per guard.
    tests: Vec<Test<'r>>,
    /// Binding slots of the rule.
    pub slots: usize,
}

impl<'r> Compiled<'r> {
    pub fn new(m: &mut Module, rule: &'r CompiledRule) -> Self {
        Compiled {
            guards: &rule.guards,
            tests: rule.guards.iter().map(Test::compile).collect(),
            slots: rule.slots,
            ..Compiled::with_selectors(
                &rule.patterns,
                &rule.plan,
                Rc::new(Selectors::new(m, &rule.patterns)),
            )
        }
    }

    /// `patterns` found by `plan`, with selectors interned before (an `exists(...)`'s, kept
    /// for the run in [`Caches::exists`]).
    pub fn with_selectors(patterns: &'r [Pattern], plan: &'r [Step], sel: Rc<Selectors>) -> Self {
        Compiled {
            patterns,
            plan,
            sel,
            guards: &[],
            tests: Vec::new(),
            slots: 0,
        }
    }

    /// Whether the root pattern tests attributes at all.
    pub fn root_has_attr_tests(&self) -> bool {
        !self.patterns[0].attrs.is_empty()
    }

    /// Whether ops named `name` may be the root of a match: what [`Compiled::root_accepts`]
    /// then tests depends on the op (attribute tests of alternatives, stage).
    pub fn root_may_accept_name(&self, m: &Module, cache: &mut Caches, name: Sym) -> bool {
        self.sel.accepts_name(0, m, cache, name)
    }

    /// Whether the root pattern's leading attribute tests that need no evaluation (`key: _`,
    /// `key: $c`, `not key`, `key: LITERAL`) may pass at an op with the dictionary `id`, by
    /// presence alone. Matching the root reads them before anything can fail with an error,
    /// and they do not depend on the operand position tried, so when this is false no match
    /// is rooted at the op: it is asked once per dictionary, instead of once per op and
    /// operand position of a `(.., %v, ..)` root. The first test with a computed value ends
    /// the prefix (evaluating it might be an error to report).
    pub fn root_attrs_may_pass_dict(&self, m: &Module, id: AttrId) -> bool {
        let tests = &self.patterns[0].attrs;
        let attrs = m.ctx.attrs(id);
        for ap in tests {
            let need = match &ap.test {
                AttrTest::Present | AttrTest::Capture(_) | AttrTest::Equals(Expr::Lit(..)) => true,
                AttrTest::Absent => false,
                AttrTest::Equals(_) => return true,
            };
            if attrs.get(&ap.key).is_some() != need {
                return false;
            }
        }
        true
    }

    /// Whether `op`, whose name the root may accept ([`Compiled::root_may_accept_name`]: the
    /// worklist tries only such rules at it), can be the root of a match: the stage and the
    /// attribute tests of alternatives, a cheap pre-filter.
    pub fn root_accepts(&self, m: &Module, cache: &mut Caches, op: OpId) -> bool {
        (!self.sel.with_attrs[0] || self.sel.accepts[0].accepts(m, cache, op))
            && self.patterns[0]
                .stage
                .is_none_or(|s| cache.role(m, op) == Some(s))
    }
}

/// A complete match: bindings, and the ops of the top-level patterns in order.
pub struct Match {
    pub bindings: Bindings,
    pub ops: Vec<OpId>,
    /// What the engine remembers so that the rule fires once on it: the ops, and the operand
    /// position each `(.., %v, ..)` pattern matched at.
    pub key: MemoKey,
}

/// Applications already made: the rule index followed by the matched ops, so a rule fires at
/// most once on the same ops.
pub type Memo = FxHashSet<MemoKey>;

/// A fired match: its rule and its ops. A match of up to three ops (nearly every rule's) is
/// held inline, so remembering one of the hundreds of thousands of firings in a large program
/// allocates nothing.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MemoKey {
    /// The rule, then the ops, then `u32::MAX` (never an op id) for unused places.
    Inline([u32; 4]),
    Heap(Box<[u32]>),
}

pub struct Searcher<'a, 'r> {
    pub m: &'a mut Module,
    pub rules: &'a RuleSet,
    pub c: &'a Compiled<'r>,
    pub memo: &'a Memo,
    pub cache: &'a mut Caches,
    pub rule_index: usize,
    /// Complete matches found (including memoized ones), for `--stats`.
    pub matches: u64,
}

/// The operand positions a pattern is tried at on `op`: each one for `(.., %v, ..)`, else one
/// try (its operands are where the pattern names them).
fn choices(m: &Module, pat: &Pattern, op: OpId) -> std::ops::Range<usize> {
    if pat.some {
        0..m.main.num_operands(op)
    } else {
        0..1
    }
}

/// A search's scratch vectors (the matched op and the operand position of each of `n`
/// patterns), taken out of `slot` and emptied; the caller puts them back when done.
fn take_scratch(
    slot: &mut (Vec<Option<OpId>>, Vec<u32>),
    n: usize,
) -> (Vec<Option<OpId>>, Vec<u32>) {
    let (mut ops, mut picked) = std::mem::take(slot);
    ops.clear();
    ops.resize(n, None);
    picked.clear();
    picked.resize(n, 0);
    (ops, picked)
}

impl<'r> Searcher<'_, 'r> {
    /// The first match rooted at `root` that passes the guards and was not applied before.
    /// `b` is scratch space (what it held is dropped): one per run, rather than an allocation
    /// per root tried.
    pub fn find(&mut self, root: OpId, b: &mut Bindings) -> Result<Option<Match>, EvalError> {
        let n = self.c.patterns.len();
        b.reset(self.c.slots);
        // The run's scratch vectors (a root is tried hundreds of thousands of times).
        let (mut ops, mut picked) = take_scratch(&mut self.cache.find_scratch, n);
        let found = self.find_with(root, &mut ops, &mut picked, b);
        self.cache.find_scratch = (ops, picked);
        found
    }

    fn find_with(
        &mut self,
        root: OpId,
        ops: &mut Vec<Option<OpId>>,
        picked: &mut Vec<u32>,
        b: &mut Bindings,
    ) -> Result<Option<Match>, EvalError> {
        for choice in choices(self.m, &self.c.patterns[0], root) {
            let mark = b.mark();
            let mut acc = 0;
            if self.match_op(&self.c.patterns[0], &mut acc, root, choice, b)? {
                ops[0] = Some(root);
                picked[0] = choice as u32;
                if let Some(found) = self.extend(1, ops, picked, b, true)? {
                    return Ok(Some(found));
                }
                ops[0] = None;
            }
            b.undo(mark);
        }
        Ok(None)
    }

    /// Whether the patterns match anywhere, given the bindings `b` already holds (an
    /// `exists(...)`: no root, no guards, no memo). `b` is left as it was.
    pub fn exists(&mut self, b: &mut Bindings) -> Result<bool, EvalError> {
        let n = self.c.patterns.len();
        // The run's scratch vectors, taken out while searching (an `exists` in the patterns'
        // own tests takes fresh ones).
        let (mut ops, mut picked) = take_scratch(&mut self.cache.exists_scratch, n);
        let mark = b.mark();
        let found = self.extend(0, &mut ops, &mut picked, b, false);
        b.undo(mark);
        self.cache.exists_scratch = (ops, picked);
        Ok(found?.is_some())
    }

    /// Extends a partial match (`ops`, `b`: the plan's steps before `step` matched) to a
    /// complete one. `b` holds the complete match's bindings when one is found; otherwise what
    /// this call bound is undone. The bindings are copied into the [`Match`] only when `keep`
    /// (an `exists` needs only the answer).
    fn extend(
        &mut self,
        step: usize,
        ops: &mut Vec<Option<OpId>>,
        picked: &mut Vec<u32>,
        b: &mut Bindings,
        keep: bool,
    ) -> Result<Option<Match>, EvalError> {
        let Some(&Step { pattern: j, reach }) = self.c.plan.get(step) else {
            return self.complete(ops, picked, b, keep);
        };
        let mut cands = self.cache.op_lists.pop().unwrap_or_default();
        self.candidates(j, reach, b, &mut cands);
        let found = self.try_candidates(j, step, &cands, ops, picked, b, keep);
        cands.clear();
        self.cache.op_lists.push(cands);
        found
    }

    /// [`Searcher::extend`] over the candidate ops `cands` of step `step` (pattern `j`).
    #[allow(clippy::too_many_arguments)]
    fn try_candidates(
        &mut self,
        j: usize,
        step: usize,
        cands: &[OpId],
        ops: &mut Vec<Option<OpId>>,
        picked: &mut Vec<u32>,
        b: &mut Bindings,
        keep: bool,
    ) -> Result<Option<Match>, EvalError> {
        for &op in cands {
            if !self.cache.tick() {
                // Past `--timeout`: `cache.timed_out` tells the engine why nothing was found.
                return Ok(None);
            }
            if ops.contains(&Some(op)) || !self.m.main.is_live(op) {
                continue;
            }
            for choice in choices(self.m, &self.c.patterns[j], op) {
                let mark = b.mark();
                let mut acc = self.c.sel.starts[j];
                if self.match_op(&self.c.patterns[j], &mut acc, op, choice, b)? {
                    ops[j] = Some(op);
                    picked[j] = choice as u32;
                    if let Some(found) = self.extend(step + 1, ops, picked, b, keep)? {
                        return Ok(Some(found));
                    }
                    ops[j] = None;
                }
                b.undo(mark);
            }
        }
        Ok(None)
    }

    /// The ops a step's pattern (`j`) is tried at: the defining op of a bound value (an op
    /// bound to the name is that op), the users of a bound value in op order, each once (only
    /// those using it at the operand position the pattern names it at, if fixed), or the ops
    /// carrying a marker, in id order. A slot that holds nothing the step can follow gives
    /// none: the pattern could not match it anyway. The list `out` (empty) is one of the run's
    /// reused lists: a step of every match attempt would otherwise allocate one.
    fn candidates(&mut self, j: usize, reach: Reach, b: &Bindings, out: &mut Vec<OpId>) {
        match reach {
            // Only the worklist's op, which `find` matches itself.
            Reach::Root => {}
            Reach::Def(s) => match b.get(s) {
                Some(Val::Value(v)) => out.extend(self.m.main.defining_op(*v)),
                Some(Val::Op(o)) => out.push(*o),
                _ => {}
            },
            Reach::Users { slot, at } => {
                if let Some(Some(v)) = b.get(slot).and_then(|x| as_value(self.m, x)) {
                    let uses = self.m.main.uses(v);
                    match at {
                        Some(i) => out.extend(uses.filter(|u| u.index == i).map(|u| u.op)),
                        None => out.extend(uses.map(|u| u.op)),
                    }
                    out.sort_unstable();
                    out.dedup();
                }
            }
            Reach::Marked(k) => {
                let test = &self.c.patterns[j].attrs[k];
                if let AttrTest::Equals(Expr::Lit(want, _)) = &test.test {
                    self.cache.marked.ops(self.m, &test.key, want, out);
                }
            }
        }
    }

    fn complete(
        &mut self,
        ops: &[Option<OpId>],
        picked: &[u32],
        b: &mut Bindings,
        keep: bool,
    ) -> Result<Option<Match>, EvalError> {
        for (g, t) in self.c.guards.iter().zip(&self.c.tests) {
            let mut env = RtEnv {
                m: self.m,
                rules: self.rules,
                b,
                cache: self.cache,
            };
            match t.test(&mut env)? {
                Ok(true) => {}
                Ok(false) => return Ok(None),
                Err(v) => {
                    return Err(EvalError {
                        span: g.span(),
                        message: format!("a guard must be a bool, found {}", v.a_kind()),
                    })
                }
            }
        }
        self.matches += 1;
        if !keep {
            // An `exists`: the answer is all it needs (no memo, no bindings, no ops).
            return Ok(Some(Match {
                bindings: Bindings::new(0),
                ops: Vec::new(),
                key: MemoKey::Inline([u32::MAX; 4]),
            }));
        }
        let ops: Vec<OpId> = ops.iter().flatten().copied().collect();
        debug_assert_eq!(ops.len(), self.c.patterns.len());
        let positions: Vec<u32> = (self.c.patterns.iter().zip(picked))
            .filter(|(p, _)| p.some)
            .map(|(_, &k)| k)
            .collect();
        let key = memo_key(self.rule_index, &ops, &positions);
        if self.memo.contains(&key) {
            return Ok(None);
        }
        Ok(Some(Match {
            bindings: b.snapshot(),
            ops,
            key,
        }))
    }

    /// Matches one pattern (and its nested patterns) at `op`, extending `b`.
    fn match_op(
        &mut self,
        pat: &'r Pattern,
        acc: &mut usize,
        op: OpId,
        choice: usize,
        b: &mut Bindings,
    ) -> Result<bool, EvalError> {
        let my_acc = *acc;
        *acc += 1;
        let m = &*self.m;
        if !m.main.is_live(op) || !self.c.sel.accepts(my_acc, m, self.cache, op) {
            return Ok(false);
        }
        if let Some(want) = pat.stage {
            if self.cache.role(m, op) != Some(want) {
                return Ok(false);
            }
        }
        if let Some(bind) = pat.bind {
            match b.get(bind) {
                Some(Val::Op(o)) if *o != op => return Ok(false),
                // A bound value's defining op: any of its results may be the value. The name
                // keeps meaning that value (as an op, it still names this one).
                Some(Val::Value(v)) => {
                    let v = *v;
                    if !m.main.results(op).any(|r| r == v) {
                        return Ok(false);
                    }
                    if m.main.result(op, 0) == v {
                        b.set(bind, Val::Op(op));
                    }
                }
                _ => b.set(bind, Val::Op(op)),
            }
        }
        let n = m.main.num_operands(op);
        if pat.positional && !pat.rest && !pat.args.is_empty() && n != pat.args.len() {
            return Ok(false);
        }
        // Attributes, read in place (never a copy of the dictionary).
        for ap in &pat.attrs {
            let computed;
            let want = match &ap.test {
                // A literal is its own value: nothing to evaluate.
                AttrTest::Equals(Expr::Lit(v, _)) => Some(v),
                AttrTest::Equals(e) => {
                    let mut env = RtEnv {
                        m: self.m,
                        rules: self.rules,
                        b,
                        cache: self.cache,
                    };
                    computed = eval(&mut env, e)?;
                    Some(&computed)
                }
                _ => None,
            };
            let m = &*self.m;
            let have = m.ctx.attrs(m.main.op_attrs(op)).get(&ap.key);
            match &ap.test {
                AttrTest::Present => {
                    if have.is_none() {
                        return Ok(false);
                    }
                }
                AttrTest::Absent => {
                    if have.is_some() {
                        return Ok(false);
                    }
                }
                AttrTest::Capture(c) => {
                    let Some(a) = have else { return Ok(false) };
                    let v = Val::from_attr(a);
                    match b.get(*c) {
                        Some(old) if !old.loose_eq(&v) => return Ok(false),
                        Some(_) => {}
                        None => b.set(*c, v),
                    }
                }
                AttrTest::Equals(_) => {
                    let Some(a) = have else { return Ok(false) };
                    // `{flag: true}` also accepts Paddle's one-element array form `[true]`.
                    if !attr_equals(a, want.unwrap_or(&Val::NullValue)) {
                        return Ok(false);
                    }
                }
            }
        }
        // Operands.
        let name = self.m.main.op_name(op);
        for (i, a) in pat.args.iter().enumerate() {
            let idx = match &a.operand {
                None if pat.some => choice,
                None => i,
                Some(_) if pat.positional => return Ok(false),
                Some(_) => {
                    match self
                        .c
                        .sel
                        .operand_index(my_acc, pat, i, self.m, self.rules, name)
                    {
                        Some(k) => k,
                        None => return Ok(false),
                    }
                }
            };
            if idx >= n {
                return Ok(false);
            }
            let operand = self.m.main.operand(op, idx);
            match &a.pat {
                ValPat::Wild => {}
                ValPat::Var { slot, ty } => {
                    let Some(v) = operand else { return Ok(false) };
                    match b.get(*slot) {
                        Some(bound) => {
                            if as_value(self.m, bound) != Some(Some(v)) {
                                return Ok(false);
                            }
                        }
                        None => b.set(*slot, Val::Value(v)),
                    }
                    if let Some(t) = *ty {
                        let tv = Val::Type(self.m.main.value_type(v));
                        match b.get(t) {
                            Some(old) if *old != tv => return Ok(false),
                            Some(_) => {}
                            None => b.set(t, tv),
                        }
                    }
                }
                ValPat::Op(inner) => {
                    let Some(v) = operand else { return Ok(false) };
                    let Some(d) = self.m.main.defining_op(v) else {
                        return Ok(false);
                    };
                    if self.m.main.result(d, 0) != v || !self.match_op(inner, acc, d, 0, b)? {
                        return Ok(false);
                    }
                }
            }
        }
        Ok(true)
    }
}

/// The memo key of an application: rule index, the matched ops, then the operand position of
/// each `(.., %v, ..)` pattern.
fn memo_key(rule_index: usize, ops: &[OpId], positions: &[u32]) -> MemoKey {
    let words = std::iter::once(rule_index as u32)
        .chain(ops.iter().map(|o| o.0))
        .chain(positions.iter().copied());
    if ops.len() + positions.len() <= 3 {
        let mut k = [u32::MAX; 4];
        for (slot, w) in k.iter_mut().zip(words) {
            *slot = w;
        }
        MemoKey::Inline(k)
    } else {
        MemoKey::Heap(words.collect())
    }
}
