//! Structural rules lowered to [`CompiledRule`]s: patterns with resolved selectors and stages,
//! builds with their dialect entries, actions with their insertion points, every `%x`/`$x` a
//! slot of one numbering per rule (see [`Scope`]).

use super::expr::Scope;
use super::Error;
use crate::diag::{Diagnostic, SourceFile};
use crate::rules::ast;
use crate::rules::compiled::{
    Action, ArgPat, AttrPat, AttrTest, Build, BuildArg, BuildAttr, CompiledRule, Expr, InsertPoint,
    OpSel, OperandSel, Pattern, ResultTypes, UnknownOperand, ValPat,
};
use crate::rules::decl::OpTable;
use crate::rules::plan::{self, Bound, Unreached};
use crate::rules::{resolve, Val};

/// Where a rule is, for [`CompiledRule`]'s metadata.
pub struct Origin {
    pub file: usize,
    pub line: usize,
    /// Its index among its phase's rules (the loader, which lowers a file's rules before it
    /// lays out phases, sets it when it places the rule).
    pub index: usize,
}

/// The ids of a rule set's builds and `exists` ([`Build::id`],
/// [`crate::rules::compiled::Exists::id`]): each lowered rule takes the next ones, so that the
/// engine keeps its per-run state of them in vectors.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ids {
    pub builds: usize,
    pub exists: usize,
}

impl Ids {
    pub(super) fn take_build(&mut self) -> usize {
        self.builds += 1;
        self.builds - 1
    }

    pub(super) fn take_exists(&mut self) -> usize {
        self.exists += 1;
        self.exists - 1
    }
}

/// Why a structural rule could not be lowered.
#[derive(Debug)]
pub enum LowerError {
    /// What the checker would have said (offset, message).
    At(Error),
    /// A pattern no step of its match plan reaches.
    Unreached(Unreached),
}

impl LowerError {
    pub fn diagnostic(self, src: &SourceFile) -> Diagnostic {
        match self {
            LowerError::At((offset, msg)) => Diagnostic::at(src, offset, msg),
            LowerError::Unreached(u) => u.diagnostic(src),
        }
    }
}

/// Lowers one structural rule with the parameters' final values, its builds and `exists`
/// numbered from `ids` on (which it advances), its `match` and `exists` planned.
pub fn structural(
    r: &ast::StructRule,
    params: &dyn Fn(&str) -> Option<Val>,
    at: Origin,
    ops: &OpTable,
    ids: &mut Ids,
) -> Result<CompiledRule, LowerError> {
    let mut sc = Scope::new(params, true);
    sc.ops = ops.clone();
    sc.next = *ids;
    let lowered = lower_clauses(&mut sc, r);
    if let Some(u) = sc.unreached.take() {
        return Err(LowerError::Unreached(u));
    }
    let (patterns, guards, actions) = lowered.map_err(LowerError::At)?;
    let plan = plan::of_match(&patterns).map_err(|j| {
        LowerError::Unreached(Unreached::Match {
            offset: patterns[j].span.0,
            rule: r.name.name.clone(),
        })
    })?;
    *ids = sc.next;
    Ok(CompiledRule {
        name: r.name.name.clone(),
        name_span: r.name.span,
        file: at.file,
        line: at.line,
        index: at.index,
        slots: sc.slots(),
        patterns,
        plan,
        guards,
        actions,
    })
}

type Clauses = (Vec<Pattern>, Vec<Expr>, Vec<Action>);

/// The patterns, guards and actions of `r`, in the order the text gives them.
fn lower_clauses(sc: &mut Scope, r: &ast::StructRule) -> Result<Clauses, Error> {
    let (mut patterns, mut guards, mut actions) = (Vec::new(), Vec::new(), Vec::new());
    for c in &r.clauses {
        match c {
            ast::Clause::Match(ps) => {
                for p in ps {
                    patterns.push(sc.pattern(p)?);
                }
            }
            ast::Clause::Where(e) => guards.push(sc.expr(e)?),
            ast::Clause::Action(a) => actions.push(sc.action(a)?),
        }
    }
    Ok((patterns, guards, actions))
}

fn stage(s: &ast::Ident) -> Result<i64, Error> {
    Ok(resolve::stage(s)?)
}

fn op_sel(sel: &ast::OpSel) -> Result<OpSel, Error> {
    Ok(match sel {
        ast::OpSel::Name(i) | ast::OpSel::Quoted(i) => OpSel::Name(i.name.clone()),
        ast::OpSel::Class(c) => OpSel::Class(resolve::op_class(c)?),
        ast::OpSel::OneOf(v, _) => OpSel::OneOf(v.iter().map(op_sel).collect::<Result<_, _>>()?),
        ast::OpSel::With { sel, attrs, .. } => {
            let tests = attrs
                .iter()
                .map(|a| Ok((a.key.name.clone(), resolve::alt_test(a)?)))
                .collect::<Result<_, Error>>()?;
            OpSel::With(Box::new(op_sel(sel)?), tests)
        }
    })
}

impl Scope<'_> {
    pub(super) fn pattern(&mut self, p: &ast::OpPattern) -> Result<Pattern, Error> {
        let op = op_sel(&p.op)?;
        let stage = p.stage.as_ref().map(stage).transpose()?;
        let bind = p.bind.as_ref().map(|b| self.value_slot(&b.name));
        if let Some(s) = bind {
            self.bound.set(s, Bound::Op);
        }
        let mut args = Vec::with_capacity(p.args.len());
        for a in &p.args {
            let pat = match &a.pat {
                ast::ValPat::Var { name, ty } => {
                    let slot = self.value_slot(&name.name);
                    if self.bound.get(slot) == Bound::No {
                        self.bound.set(slot, Bound::Value);
                    }
                    ValPat::Var {
                        slot,
                        ty: ty.as_ref().map(|t| self.capture_slot(&t.name)),
                    }
                }
                ast::ValPat::Wild(_) => ValPat::Wild,
                ast::ValPat::Op(inner) => ValPat::Op(Box::new(self.pattern(inner)?)),
            };
            args.push(ArgPat {
                operand: a.operand.as_ref().map(|o| o.name.clone()),
                pat,
            });
        }
        let mut attrs = Vec::with_capacity(p.attrs.len());
        for a in &p.attrs {
            let test = match &a.val {
                ast::AttrPatVal::Capture(c) => AttrTest::Capture(self.capture_slot(&c.name)),
                ast::AttrPatVal::Present(_) => AttrTest::Present,
                ast::AttrPatVal::Absent(_) => AttrTest::Absent,
                ast::AttrPatVal::Equals(e) => AttrTest::Equals(self.expr(e)?),
            };
            attrs.push(AttrPat {
                key: a.key.name.clone(),
                test,
            });
        }
        Ok(Pattern {
            bind,
            op,
            stage,
            positional: p.args.iter().all(|a| a.operand.is_none()),
            args,
            rest: p.rest,
            some: p.some,
            attrs,
            span: p.span,
        })
    }

    pub(super) fn build(&mut self, b: &ast::Build) -> Result<Build, Error> {
        let spec = if b.op.quoted {
            self.ops.quoted_spec(&b.op.name.name)
        } else {
            self.ops.spec(&b.op.name.name)
        };
        let mut args = Vec::with_capacity(b.args.len());
        for (i, a) in b.args.iter().enumerate() {
            let index = match (&a.operand, spec) {
                (Some(n), Some(s)) => s.operand_index(&n.name).ok_or_else(|| UnknownOperand {
                    name: n.name.clone(),
                    span: n.span,
                }),
                _ => Ok(i),
            };
            args.push(BuildArg {
                index,
                value: self.expr(&a.value)?,
            });
        }
        let mut attrs = Vec::with_capacity(b.attrs.len());
        for (k, e) in &b.attrs {
            let value = self.expr(e)?;
            attrs.push(BuildAttr {
                key: k.name.clone(),
                fixed: value.is_fixed(),
                value,
            });
        }
        // What the rule leaves out, Paddle's builder would have set (`dialect::default_attrs`);
        // the engine places every key where Paddle's sorted order puts it.
        if spec.is_some() {
            for (key, d) in self.ops.defaults(&b.op.name.name) {
                if !attrs.iter().any(|a| a.key == key) {
                    attrs.push(BuildAttr {
                        key,
                        value: Expr::Lit(d, b.span),
                        fixed: true,
                    });
                }
            }
        }
        let types = match &b.ty {
            Some(t) => match crate::rules::check::like_arg(t) {
                Some(v) => ResultTypes::Like(self.value_ref(v)),
                None => ResultTypes::Given(self.expr(t)?),
            },
            None => match self.ops.declared(&b.op.name.name) {
                Some(d) => ResultTypes::Operands(d.result_like.clone()),
                None => ResultTypes::Derived,
            },
        };
        let bind = b.bind.as_ref().map(|i| self.value_slot(&i.name));
        if let Some(s) = bind {
            self.bound.set(s, Bound::Op);
        }
        Ok(Build {
            id: self.next.take_build(),
            bind,
            op: b.op.name.name.clone(),
            spec,
            types,
            named_args: b.args.iter().any(|a| a.operand.is_some()),
            args,
            attrs,
            span: b.span,
        })
    }

    fn insert_point(&mut self, at: &ast::InsertPoint) -> Result<InsertPoint, Error> {
        Ok(match at {
            ast::InsertPoint::After(e) => InsertPoint::After(self.expr(e)?),
            ast::InsertPoint::Before(e) => InsertPoint::Before(self.expr(e)?),
            ast::InsertPoint::StageEnd(s) => InsertPoint::StageEnd(stage(s)?),
            ast::InsertPoint::StageStart(s) => InsertPoint::StageStart(stage(s)?),
            ast::InsertPoint::RegionEnd { op, index, span } => InsertPoint::RegionEnd {
                op: self.expr(op)?,
                index: *index,
                span: *span,
            },
        })
    }

    fn actions(&mut self, v: &[ast::Action]) -> Result<Vec<Action>, Error> {
        v.iter().map(|a| self.action(a)).collect()
    }

    pub(super) fn action(&mut self, a: &ast::Action) -> Result<Action, Error> {
        use ast::Action as A;
        Ok(match a {
            A::Let { name, value, .. } => Action::Let {
                slot: self.capture_slot(&name.name),
                value: self.expr(value)?,
            },
            A::State {
                bind,
                name,
                ty,
                init,
                span,
            } => Action::State {
                bind: {
                    let s = self.value_slot(&bind.name);
                    self.bound.set(s, Bound::Value);
                    s
                },
                name: self.expr(name)?,
                ty: self.expr(ty)?,
                init: self.build(init)?,
                span: *span,
            },
            A::Insert { at, build, .. } => Action::Insert {
                at: self.insert_point(at)?,
                build: self.build(build)?,
            },
            A::Replace {
                value,
                with,
                only_in_stage,
                span,
            } => Action::Replace {
                value: self.expr(value)?,
                with: self.expr(with)?,
                only_in_stage: only_in_stage.as_ref().map(stage).transpose()?,
                span: *span,
            },
            A::SetOperand {
                op,
                target,
                value,
                span,
            } => Action::SetOperand {
                op: self.value_ref(op),
                target: match target {
                    ast::OperandSel::Name(n) => OperandSel::Name(n.name.clone(), n.span),
                    ast::OperandSel::Value(v) => OperandSel::Value(self.value_ref(v)),
                },
                value: self.expr(value)?,
                span: *span,
            },
            A::Erase { op, span } => Action::Erase {
                op: self.value_ref(op),
                span: *span,
            },
            A::Move { op, to, span } => Action::Move {
                op: self.value_ref(op),
                to: self.insert_point(to)?,
                span: *span,
            },
            A::MoveStage { stage: s, to, span } => Action::MoveStage {
                stage: stage(s)?,
                to: self.insert_point(to)?,
                span: *span,
            },
            A::SetAttrs { op, attrs, .. } => Action::SetAttrs {
                op: self.value_ref(op),
                attrs: attrs
                    .iter()
                    .map(|(k, e)| Ok((k.name.clone(), self.expr(e)?)))
                    .collect::<Result<_, Error>>()?,
            },
            A::If {
                cond, then, els, ..
            } => Action::If {
                cond: self.expr(cond)?,
                then: self.actions(then)?,
                els: self.actions(els)?,
            },
            A::Error { message, span } => Action::Error {
                message: self.str_parts(&message.parts)?,
                span: *span,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::builtins::{Builtin, Query};
    use crate::rules::compiled::{Action, AttrTest, OpSel, ValPat};
    use crate::rules::compiled::{Callee, Expr};
    use crate::rules::{load_str, stage_role, OpClass, Val};

    #[test]
    fn names_become_slots_and_stages_roles() {
        let text = "param k: int = 4;\n\
                    // t\n\
                    rule r {\n\
                        match %c = pd_op.cast(%x) {dtype: $d} in backward;\n\
                        where dtype(%x) == $d and k > 1;\n\
                        replace %c with %x for users in optimize;\n\
                        erase %c;\n\
                    }\n";
        let set = load_str("t.rw", text, std::path::Path::new("."), &[]).expect("loads");
        let r = &set.phases[0].structural[0];
        assert_eq!((r.name.as_str(), r.index, r.line), ("r", 0, 3));
        // %c, %x, $d: one slot each, shared by every mention.
        assert_eq!(r.slots, 3);
        let p = &r.patterns[0];
        assert!(matches!(&p.op, OpSel::Name(n) if n == "pd_op.cast"));
        assert_eq!(p.stage, stage_role("backward"));
        let Some(c) = p.bind else { panic!("bound") };
        let ValPat::Var { slot: x, .. } = p.args[0].pat else {
            panic!("a variable")
        };
        let AttrTest::Capture(d) = p.attrs[0].test else {
            panic!("a capture")
        };
        assert_eq!([c, x, d].iter().filter(|s| **s < 3).count(), 3);
        assert!(c != x && x != d && c != d);
        // The guard's call names a builtin; the parameter is a literal.
        let Expr::Binary { l, r: k_test, .. } = &r.guards[0] else {
            panic!("a conjunction")
        };
        let Expr::Binary { l: call, .. } = &**l else {
            panic!("a comparison")
        };
        assert!(matches!(
            &**call,
            Expr::Call {
                func: Callee::Builtin(Builtin::Query(Query::DType), _),
                ..
            }
        ));
        let Expr::Binary { l: k, .. } = &**k_test else {
            panic!("a comparison")
        };
        assert!(matches!(&**k, Expr::Lit(Val::Int(4), _)));
        let Action::Replace { only_in_stage, .. } = &r.actions[0] else {
            panic!("a replace")
        };
        assert_eq!(*only_in_stage, stage_role("optimize"));
        let Action::Erase { op, .. } = &r.actions[1] else {
            panic!("an erase")
        };
        assert_eq!(op.slot, c);
    }

    #[test]
    fn op_classes_and_alternatives_are_resolved() {
        let text = "// t\n\
                    rule r {\n\
                        match %o = optimizer(param: %p, ..);\n\
                        match %r = (pd_op.c_allreduce_sum | pd_op.all_reduce {reduce_type: 0})(%p);\n\
                        set %o {tag: true};\n\
                    }\n";
        let set = load_str("t.rw", text, std::path::Path::new("."), &[]).expect("loads");
        let r = &set.phases[0].structural[0];
        assert!(matches!(r.patterns[0].op, OpSel::Class(OpClass::Effect(_))));
        assert!(!r.patterns[0].positional);
        let OpSel::OneOf(alts) = &r.patterns[1].op else {
            panic!("a set")
        };
        assert!(matches!(&alts[1], OpSel::With(_, tests) if tests.len() == 1));
    }
}
