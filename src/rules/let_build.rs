//! Let-bound builds: `let %s = pd_op.scale(%m, ..) {..};` in a structural rule's actions names
//! an op to build; later actions use `%s`.
//!
//! Why sugar and not an action of its own: the language places every op it builds, and an op
//! built nowhere has no meaning. So the op is built where it is **first used**, exactly as if
//! the build had been written there with its name (`in %o: grad := %s = pd_op.scale(..) {..}`,
//! which the engine already binds): the first use must be a place where an op can be built
//! (the new operand of `in %o: x := %s`, the new value of `replace %v with %s`, or an operand
//! of a built op), and every later use refers to that op. The substitution happens when the file
//! is loaded (`super::expand`), so the resolver and the engine see only existing actions.
//!
//! Refused, each at the `let` or the offending use: a name the rule already binds; a `let`
//! never used; a first use inside an `if` (the op would exist on one branch only: move the
//! `let` into the branch); a first use where no op can be built (`after %s:`, `set %s`,
//! `name(%s)`, ...: build it first, with an earlier use).

use super::ast::*;
use crate::diag::{Diagnostic, SourceFile};
use indexmap::IndexSet;

/// Substitutes the rule's `let %s = BUILD;` actions into their first uses.
pub fn desugar(src: &SourceFile, r: &mut StructRule) -> Result<(), Diagnostic> {
    let mut bound: IndexSet<String> = IndexSet::new();
    for c in &r.clauses {
        match c {
            Clause::Match(ps) => {
                for p in ps {
                    super::resolver::pattern_vars(p, &mut bound);
                }
            }
            Clause::Action(a) => action_binds(a, &mut bound),
            Clause::Where(_) => {}
        }
    }
    let l = Lets { src, bound };
    let mut i = 0;
    while i < r.clauses.len() {
        if let Clause::Action(a) = &r.clauses[i] {
            if is_value_let(a) {
                let Clause::Action(a) = r.clauses.remove(i) else {
                    continue;
                };
                let rest: Vec<&mut Action> = r.clauses[i..]
                    .iter_mut()
                    .filter_map(|c| match c {
                        Clause::Action(a) => Some(a),
                        _ => None,
                    })
                    .collect();
                l.place(a, rest)?;
                continue;
            }
        }
        if let Clause::Action(a) = &mut r.clauses[i] {
            l.nested(a)?;
        }
        i += 1;
    }
    Ok(())
}

fn is_value_let(a: &Action) -> bool {
    matches!(a, Action::Let { name, .. } if name.name.starts_with('%'))
}

struct Lets<'a> {
    src: &'a SourceFile,
    /// Every `%name` the rule's patterns and other actions bind.
    bound: IndexSet<String>,
}

impl Lets<'_> {
    /// The `let`s in the branches of an `if`.
    fn nested(&self, a: &mut Action) -> Result<(), Diagnostic> {
        if let Action::If { then, els, .. } = a {
            self.list(then)?;
            self.list(els)?;
        }
        Ok(())
    }

    fn list(&self, acts: &mut Vec<Action>) -> Result<(), Diagnostic> {
        let mut i = 0;
        while i < acts.len() {
            if is_value_let(&acts[i]) {
                let a = acts.remove(i);
                self.place(a, acts[i..].iter_mut().collect())?;
                continue;
            }
            self.nested(&mut acts[i])?;
            i += 1;
        }
        Ok(())
    }

    /// Puts the build of `let` into the first of `rest` that uses its name.
    fn place(&self, let_: Action, rest: Vec<&mut Action>) -> Result<(), Diagnostic> {
        let Action::Let { name, value, span } = let_ else {
            return Ok(());
        };
        let Expr::Build(mut build) = value else {
            return Ok(());
        };
        if self.bound.contains(&name.name) {
            return Err(super::resolver::names::let_name_taken(self.src, &name));
        }
        build.bind = Some(name.clone());
        let mut build = Some(build);
        for a in rest {
            if !mentions_action(a, &name.name) {
                continue;
            }
            if matches!(a, Action::If { .. }) {
                return Err(Diagnostic::at(
                    self.src,
                    a.span().0,
                    format!("`{}` is first used inside an `if`", name.name),
                )
                .with_hint("the op would be built on one branch only: move the `let` into the branch that uses it"));
            }
            if first_use(a, &name.name, &mut build) {
                return Ok(());
            }
            return Err(Diagnostic::at(
                self.src,
                a.span().0,
                format!("the first use of `{}` must be where an op can be built", name.name),
            )
            .with_hint("a let-bound op is built where it is first used: as the new operand of `in %o: x := %s`, as `replace %v with %s`, or as an operand of a built op"));
        }
        Err(Diagnostic::at(
            self.src,
            span.0,
            format!("`{}` is bound by `let` but never used", name.name),
        )
        .with_hint(
            "a let-bound op is built where it is first used; an op no action uses is built nowhere",
        ))
    }
}

/// Substitutes the build for the first use of `name` in `a`, if that use is a place where an
/// op can be built; false otherwise. Follows the engine's order: an action's target op and
/// insertion point come before its new value; a build's plain operands before its nested
/// builds.
fn first_use(a: &mut Action, name: &str, build: &mut Option<Box<Build>>) -> bool {
    match a {
        Action::SetOperand {
            op, target, value, ..
        } => {
            if op.name.name == name {
                return false;
            }
            if let OperandSel::Value(v) = target {
                if v.name.name == name {
                    return false;
                }
            }
            in_value(value, name, build)
        }
        Action::AppendOperand { op, value, .. } => {
            op.name.name != name && in_value(value, name, build)
        }
        Action::Replace { value, with, .. } => {
            !mentions(value, name) && in_value(with, name, build)
        }
        Action::Insert { at, build: b, .. } => {
            let at_mentions = match at {
                InsertPoint::After(e)
                | InsertPoint::Before(e)
                | InsertPoint::RegionEnd { op: e, .. } => mentions(e, name),
                _ => false,
            };
            !at_mentions && in_build(b, name, build)
        }
        _ => false,
    }
}

/// `%name` itself (replaced by the build), or a build whose operands use it first.
fn in_value(e: &mut Expr, name: &str, build: &mut Option<Box<Build>>) -> bool {
    match e {
        Expr::Var(Var::Value(v)) if v.name.name == name && v.field.is_none() => {
            match build.take() {
                Some(b) => {
                    *e = Expr::Build(b);
                    true
                }
                None => false,
            }
        }
        Expr::Build(b) => in_build(b, name, build),
        _ => false,
    }
}

fn in_build(b: &mut Build, name: &str, build: &mut Option<Box<Build>>) -> bool {
    // The engine reads a build's plain operands first, then builds its nested builds in order
    // (each the same way). The op can stand for one plain `%name` only when no other plain
    // operand, and no nested build before it, reads `%name` (they would read it unbuilt).
    let plain: Vec<usize> = (0..b.args.len())
        .filter(|&i| !matches!(b.args[i].value, Expr::Build(_)) && mentions(&b.args[i].value, name))
        .collect();
    match plain.as_slice() {
        [] => {}
        [t] => {
            let before = b.args[..*t].iter().any(|a| mentions(&a.value, name));
            return !before && in_value(&mut b.args[*t].value, name, build);
        }
        _ => return false,
    }
    for a in &mut b.args {
        if mentions(&a.value, name) {
            return in_value(&mut a.value, name, build);
        }
    }
    false
}

fn mentions_build(b: &Build, name: &str) -> bool {
    let mut found = false;
    b.exprs(&mut |e| found = found || mentions(e, name));
    found
}

/// Whether an expression reads `%name` (a value, a result field, an interpolation, ...).
fn mentions(e: &Expr, name: &str) -> bool {
    e.any(&mut |x| match x {
        Expr::Var(Var::Value(v)) => v.name.name == name,
        Expr::Exists(x) => x.patterns.iter().any(|p| pattern_names(p, name)),
        _ => false,
    })
}

/// Whether a pattern (or a nested one) names `%name` (the expressions it tests are
/// [`mentions`]'s).
fn pattern_names(p: &OpPattern, name: &str) -> bool {
    p.bind.as_ref().is_some_and(|b| b.name == name)
        || p.args.iter().any(|a| match &a.pat {
            ValPat::Var { name: n, .. } => n.name == name,
            ValPat::Wild(_) => false,
            ValPat::Op(inner) => pattern_names(inner, name),
        })
}

fn mentions_action(a: &Action, name: &str) -> bool {
    let point = |p: &InsertPoint| match p {
        InsertPoint::After(e) | InsertPoint::Before(e) | InsertPoint::RegionEnd { op: e, .. } => {
            mentions(e, name)
        }
        _ => false,
    };
    match a {
        Action::Let { value, .. } => mentions(value, name),
        Action::State {
            name: n, ty, init, ..
        } => mentions(n, name) || mentions(ty, name) || mentions_build(init, name),
        Action::Insert { at, build, .. } => point(at) || mentions_build(build, name),
        Action::Replace { value, with, .. } => mentions(value, name) || mentions(with, name),
        Action::SetOperand {
            op, target, value, ..
        } => {
            op.name.name == name
                || matches!(target, OperandSel::Value(v) if v.name.name == name)
                || mentions(value, name)
        }
        Action::AppendOperand { op, value, .. } => op.name.name == name || mentions(value, name),
        Action::Erase { op, .. } => op.name.name == name,
        Action::Move { op, to, .. } => op.name.name == name || point(to),
        Action::MoveStage { to, .. } => point(to),
        Action::SetAttrs { op, attrs, .. } => {
            op.name.name == name || attrs.iter().any(|(_, e)| mentions(e, name))
        }
        Action::If {
            cond, then, els, ..
        } => mentions(cond, name) || then.iter().chain(els).any(|x| mentions_action(x, name)),
        Action::Error { message, .. } => message
            .parts
            .iter()
            .any(|p| matches!(p, StrPart::Expr(x) if mentions(x, name))),
    }
}

/// Names bound by `state %m = ...` and `%a = BUILD` in actions (not by value `let`s).
pub(super) fn action_binds(a: &Action, out: &mut IndexSet<String>) {
    fn build_binds(b: &Build, out: &mut IndexSet<String>) {
        if let Some(n) = &b.bind {
            out.insert(n.name.clone());
        }
        for a in &b.args {
            if let Expr::Build(inner) = &a.value {
                build_binds(inner, out);
            }
        }
    }
    match a {
        Action::State { bind, init, .. } => {
            out.insert(bind.name.clone());
            build_binds(init, out);
        }
        Action::Insert { build, .. } => build_binds(build, out),
        Action::If { then, els, .. } => {
            for x in then.iter().chain(els) {
                action_binds(x, out);
            }
        }
        Action::SetOperand { value, .. }
        | Action::AppendOperand { value, .. }
        | Action::Replace { with: value, .. } => {
            if let Expr::Build(b) = value {
                build_binds(b, out);
            }
        }
        _ => {}
    }
}
