//! Matching a structural rule's patterns (a DAG of op patterns sharing variables) at a root op.
//!
//! The first pattern is matched at the root; every other pattern is reached from what is
//! already bound: through the defining op of a bound value (`%r` bound as an operand, then
//! `%r = c_allreduce_sum(...)`), or through the use list of a bound operand
//! (`pd_op.add_(%m, %r)` found among the users of `%r`). A pattern connected to nothing is
//! tried against every op (the resolver keeps rules connected in practice; this is only the
//! fallback). Nested patterns are matched on the defining op of the operand in place.
//! Backtracking enumerates every combination until one passes the guards and has not been
//! applied before.

use super::runtime::{as_value, op_role, Bindings, RtEnv};
use crate::dialect::{Dialect, Effect};
use crate::ir::{Module, OpId, Sym};
use crate::rules::ast::{AttrPatVal, Clause, Expr, OpPattern, OpSel, StructRule, ValPat};
use crate::rules::eval::{eval, EvalError};
use crate::rules::{RuleSet, Val, STAGES};
use std::collections::HashSet;

/// Which op names a selector accepts, decided once per rule.
#[derive(Debug, Clone)]
pub enum Accept {
    Any,
    Names(Vec<Sym>),
    Class(Effect),
    Union(Vec<Accept>),
}

impl Accept {
    pub fn compile(m: &mut Module, sel: &OpSel) -> Accept {
        match sel {
            OpSel::Name(i) | OpSel::Quoted(i) => Accept::Names(vec![m.ctx.sym(&i.name)]),
            OpSel::Class(c) => match Effect::from_class_name(&c.name) {
                Some(e) => Accept::Class(e),
                None => Accept::Any,
            },
            OpSel::OneOf(v, _) => Accept::Union(v.iter().map(|s| Accept::compile(m, s)).collect()),
        }
    }

    pub fn accepts(&self, m: &Module, op: OpId) -> bool {
        match self {
            Accept::Any => true,
            Accept::Names(n) => n.contains(&m.main.op_name(op)),
            Accept::Class(e) => Dialect::get().effect(m.ctx.str(m.main.op_name(op))) == *e,
            Accept::Union(v) => v.iter().any(|a| a.accepts(m, op)),
        }
    }
}

/// A rule prepared for matching.
pub struct Compiled<'r> {
    pub rule: &'r StructRule,
    pub patterns: Vec<&'r OpPattern>,
    /// One selector per pattern node, in pre-order (a pattern, then its nested patterns).
    accepts: Vec<Accept>,
    pub guards: Vec<&'r Expr>,
}

impl<'r> Compiled<'r> {
    pub fn new(m: &mut Module, rule: &'r StructRule) -> Self {
        let mut patterns = Vec::new();
        let mut guards = Vec::new();
        for c in &rule.clauses {
            match c {
                Clause::Match(ps) => patterns.extend(ps.iter()),
                Clause::Where(e) => guards.push(e),
                Clause::Action(_) => {}
            }
        }
        let mut accepts = Vec::new();
        fn walk(m: &mut Module, p: &OpPattern, out: &mut Vec<Accept>) {
            out.push(Accept::compile(m, &p.op));
            for a in &p.args {
                if let ValPat::Op(inner) = &a.pat {
                    walk(m, inner, out);
                }
            }
        }
        for p in &patterns {
            walk(m, p, &mut accepts);
        }
        Compiled {
            rule,
            patterns,
            accepts,
            guards,
        }
    }

    /// Whether `op` can be the root of a match (cheap pre-filter for the worklist).
    pub fn root_accepts(&self, m: &Module, op: OpId) -> bool {
        self.accepts[0].accepts(m, op)
    }

    fn accept_index(&self, pattern: usize) -> usize {
        // Pre-order index of top-level pattern `pattern`.
        fn size(p: &OpPattern) -> usize {
            1 + p
                .args
                .iter()
                .map(|a| {
                    if let ValPat::Op(i) = &a.pat {
                        size(i)
                    } else {
                        0
                    }
                })
                .sum::<usize>()
        }
        self.patterns[..pattern].iter().map(|p| size(p)).sum()
    }
}

/// A complete match: bindings, and the ops of the top-level patterns in order.
pub struct Match {
    pub bindings: Bindings,
    pub ops: Vec<OpId>,
}

pub struct Searcher<'a, 'r> {
    pub m: &'a mut Module,
    pub rules: &'a RuleSet,
    pub c: &'a Compiled<'r>,
    pub memo: &'a HashSet<(usize, Vec<OpId>)>,
    pub rule_index: usize,
    /// Complete matches found (including memoized ones), for `--stats`.
    pub matches: u64,
}

impl Searcher<'_, '_> {
    /// The first match rooted at `root` that passes the guards and was not applied before.
    pub fn find(&mut self, root: OpId) -> Result<Option<Match>, EvalError> {
        let mut b = Bindings::default();
        let mut ops = vec![None; self.c.patterns.len()];
        let mut acc = 0;
        if !self.match_op(self.c.patterns[0], &mut acc, root, &mut b)? {
            return Ok(None);
        }
        ops[0] = Some(root);
        self.extend(&mut ops, b)
    }

    fn extend(
        &mut self,
        ops: &mut Vec<Option<OpId>>,
        b: Bindings,
    ) -> Result<Option<Match>, EvalError> {
        let Some(next) = ops.iter().position(Option::is_none) else {
            return self.complete(ops, b);
        };
        // Prefer a pattern reachable from what is bound.
        let (j, cands) = self.pick(ops, &b);
        let j = j.unwrap_or(next);
        for op in cands {
            if ops.contains(&Some(op)) || !self.m.main.is_live(op) {
                continue;
            }
            let mut b2 = b.clone();
            let mut acc = self.c.accept_index(j);
            if self.match_op(self.c.patterns[j], &mut acc, op, &mut b2)? {
                ops[j] = Some(op);
                if let Some(found) = self.extend(ops, b2)? {
                    return Ok(Some(found));
                }
                ops[j] = None;
            }
        }
        Ok(None)
    }

    /// Chooses the next pattern to match and its candidate ops.
    fn pick(&self, ops: &[Option<OpId>], b: &Bindings) -> (Option<usize>, Vec<OpId>) {
        let p = &self.m.main;
        // 1. A pattern whose op name is already bound as a value: its defining op.
        for (j, pat) in self.c.patterns.iter().enumerate() {
            if ops[j].is_some() {
                continue;
            }
            if let Some(bind) = &pat.bind {
                if let Some(Val::Value(v)) = b.values.get(&bind.name) {
                    return (Some(j), p.defining_op(*v).into_iter().collect());
                }
            }
        }
        // 2. A pattern with a bound operand: the users of that value.
        for (j, pat) in self.c.patterns.iter().enumerate() {
            if ops[j].is_some() {
                continue;
            }
            for a in &pat.args {
                if let ValPat::Var { name, .. } = &a.pat {
                    if let Some(Some(v)) =
                        b.values.get(&name.name).and_then(|x| as_value(self.m, x))
                    {
                        let mut users: Vec<OpId> = p.uses(v).map(|u| u.op).collect();
                        users.sort();
                        users.dedup();
                        return (Some(j), users);
                    }
                }
            }
        }
        // 3. Nothing connects: every op.
        (None, p.walk())
    }

    fn complete(
        &mut self,
        ops: &[Option<OpId>],
        mut b: Bindings,
    ) -> Result<Option<Match>, EvalError> {
        for g in &self.c.guards {
            let mut env = RtEnv {
                m: self.m,
                rules: self.rules,
                b: &mut b,
            };
            match eval(&mut env, g)? {
                Val::Bool(true) => {}
                Val::Bool(false) => return Ok(None),
                v => {
                    return Err(EvalError {
                        span: g.span(),
                        message: format!("a guard must be a bool, found a {}", v.kind()),
                    })
                }
            }
        }
        self.matches += 1;
        let ops: Vec<OpId> = ops
            .iter()
            .map(|o| o.expect("complete match binds every pattern"))
            .collect();
        if self.memo.contains(&(self.rule_index, ops.clone())) {
            return Ok(None);
        }
        Ok(Some(Match { bindings: b, ops }))
    }

    /// Matches one pattern (and its nested patterns) at `op`, extending `b`.
    fn match_op(
        &mut self,
        pat: &OpPattern,
        acc: &mut usize,
        op: OpId,
        b: &mut Bindings,
    ) -> Result<bool, EvalError> {
        let my_acc = *acc;
        *acc += 1;
        let m = &*self.m;
        if !m.main.is_live(op) || !self.c.accepts[my_acc].accepts(m, op) {
            return Ok(false);
        }
        if let Some(s) = &pat.stage {
            let want = STAGES.iter().find(|(n, _)| *n == s.name).map(|(_, r)| *r);
            if op_role(m, op) != want {
                return Ok(false);
            }
        }
        if let Some(bind) = &pat.bind {
            match b.values.get(&bind.name) {
                Some(Val::Op(o)) if *o != op => return Ok(false),
                Some(Val::Value(v))
                    if m.main.num_results(op) == 0 || m.main.result(op, 0) != *v =>
                {
                    return Ok(false)
                }
                _ => {}
            }
            b.values.insert(bind.name.clone(), Val::Op(op));
        }
        let n = m.main.num_operands(op);
        let positional_only = pat.args.iter().all(|a| a.operand.is_none());
        if positional_only && !pat.rest && !pat.args.is_empty() && n != pat.args.len() {
            return Ok(false);
        }
        // Attributes.
        let attrs = m.ctx.attrs(m.main.op_attrs(op)).clone();
        for ap in &pat.attrs {
            let have = attrs.get(&ap.key.name);
            match &ap.val {
                AttrPatVal::Present(_) => {
                    if have.is_none() {
                        return Ok(false);
                    }
                }
                AttrPatVal::Absent(_) => {
                    if have.is_some() {
                        return Ok(false);
                    }
                }
                AttrPatVal::Capture(c) => {
                    let Some(a) = have else { return Ok(false) };
                    let v = Val::from_attr(a);
                    match b.captures.get(&c.name) {
                        Some(old) if !old.loose_eq(&v) => return Ok(false),
                        Some(_) => {}
                        None => {
                            b.captures.insert(c.name.clone(), v);
                        }
                    }
                }
                AttrPatVal::Equals(e) => {
                    let Some(a) = have else { return Ok(false) };
                    let mut env = RtEnv {
                        m: self.m,
                        rules: self.rules,
                        b,
                    };
                    let want = eval(&mut env, e)?;
                    let got = Val::from_attr(a);
                    // `{flag: true}` also accepts Paddle's one-element array form `[true]`.
                    let got_scalar = match &got {
                        Val::List(v) if v.len() == 1 => Some(v[0].clone()),
                        _ => None,
                    };
                    if !got.loose_eq(&want) && !got_scalar.is_some_and(|g| g.loose_eq(&want)) {
                        return Ok(false);
                    }
                }
            }
        }
        // Operands.
        let spec = {
            let m = &*self.m;
            Dialect::get().spec(m.ctx.str(m.main.op_name(op)))
        };
        for (i, a) in pat.args.iter().enumerate() {
            let idx = match &a.operand {
                None => i,
                Some(name) => match spec.and_then(|s| s.operand_index(&name.name)) {
                    Some(k) => k,
                    None => return Ok(false),
                },
            };
            if idx >= n {
                return Ok(false);
            }
            let operand = self.m.main.operand(op, idx);
            match &a.pat {
                ValPat::Wild(_) => {}
                ValPat::Var { name, ty } => {
                    let Some(v) = operand else { return Ok(false) };
                    match b.values.get(&name.name) {
                        Some(bound) => {
                            if as_value(self.m, bound) != Some(Some(v)) {
                                return Ok(false);
                            }
                        }
                        None => {
                            b.values.insert(name.name.clone(), Val::Value(v));
                        }
                    }
                    if let Some(t) = ty {
                        let tv = Val::Type(self.m.main.value_type(v));
                        match b.captures.get(&t.name) {
                            Some(old) if *old != tv => return Ok(false),
                            Some(_) => {}
                            None => {
                                b.captures.insert(t.name.clone(), tv);
                            }
                        }
                    }
                }
                ValPat::Op(inner) => {
                    let Some(v) = operand else { return Ok(false) };
                    let Some(d) = self.m.main.defining_op(v) else {
                        return Ok(false);
                    };
                    if self.m.main.result(d, 0) != v || !self.match_op(inner, acc, d, b)? {
                        return Ok(false);
                    }
                    continue;
                }
            }
        }
        // Skip the accept slots of nested patterns not visited (operands that failed earlier
        // return before this point, so only unvisited nested patterns remain).
        let _ = my_acc;
        Ok(true)
    }
}
