//! Desugaring of a rule file's definitions (`ops` sets and `pred` predicates) into the plain
//! rule syntax, when the file is loaded and before anything checks it.
//!
//! Why a rewrite of the syntax tree and not new engine concepts: an op set is only a name for an
//! alternation `(a | b {k: 0} | c)` the language already has, and a predicate only a name for a
//! guard expression. Substituting them gives exactly the rules an author could have written out,
//! so the resolver checks them, and the structural engine and the e-graph run them, unchanged.
//! What this module adds is what substitution alone cannot give: the definitions' own errors
//! (an unknown op in a set, a predicate that calls itself, a predicate body naming a value it
//! was not given), each reported at the definition with `file:line:col` and a caret. Every
//! definition and every rule is substituted on its own, so each faulty one is reported, and
//! within a definition each independent error: every faulty alternative of a set, every faulty
//! subterm of a predicate body. A definition or rule that names a faulty definition is not
//! reported (its error says what is wrong), and the rules that could not be substituted are not
//! resolved. A predicate body faulty only in some subterms is still substituted: the resolver
//! checks the rest of it, and of the rules that call it, and skips those subterms
//! ([`Desugared::faulty`]).
//!
//! **Op sets** (`ops reduction = (pd_op.c_allreduce_sum | pd_op.all_reduce {reduce_type: 0});`)
//! are used as an op selector, written like an op class: `%r = reduction(%g, ..)`, or as one
//! alternative of a set, `(reduction | pd_op.c_broadcast)`. A set may name other sets (not
//! itself). A file-level set is visible in its file and in the files that import it directly
//! (imports are loaded first, so their sets are already expanded here); a set inside a
//! `phase { }` only in that phase. The substituted alternatives carry the span of the name
//! that used them, so a later diagnostic points into the file being checked.
//!
//! **Predicates** (`pred sole_accumulator(%m) = uses(%m) == 2;`) are called like functions in
//! any expression of a rule: `where sole_accumulator(%m)`. The call is replaced by the body with
//! each parameter renamed to the argument (a value `%x`). Hygiene: a body mentions only its
//! parameters, the rule file's parameters, stages and dtypes; the names an `exists(...)` inside
//! it binds are renamed apart (`%s` becomes `%s@name`, which no rule can write), so they never
//! join with the calling rule's variables. Predicates are visible in their own file only (a
//! phase's in that phase): the substituted body keeps its spans, so the resolver's errors about
//! it point at the body, which must be in the file being checked.
//!
//! `let %s = BUILD;` actions are substituted into their first use by `super::let_build`.
//!
//! Whether a rule's `match` is connected is decided when the desugared rule is resolved, by its
//! match plan (`super::plan`).

use super::ast::*;
use super::builtins::Builtin;
use super::resolver::names::{self, class_names};
use super::suggest::{closest, did_you_mean};
use super::OpClass;
use crate::diag::{Diagnostic, SourceFile};
use crate::dialect::Dialect;
use indexmap::{IndexMap, IndexSet};
use std::cell::RefCell;
use std::collections::HashSet;

/// Largest expression a predicate call may expand to, in nodes, and its deepest nesting: a
/// chain of predicates that each call the next twice doubles at every step, and everything
/// after this module recurses once per level of the tree (see `limits.rs`).
const MAX_PRED_NODES: usize = 4096;
const MAX_PRED_DEPTH: usize = 256;

/// Desugars `files[idx]` in place: its definitions are substituted into its rules. The files it
/// imports (`imports`, `None` where an import failed) must have been desugared already (the
/// loader loads imports first); `incomplete` says that one failed.
///
/// Every definition and every rule is substituted on its own, so each faulty one is reported
/// (each with its first error). What names a faulty definition is not reported again, nor,
/// in an incomplete file, a name no definition in scope has (an import that failed may have
/// defined it); the rules that could not be substituted are listed for the resolver to skip.
pub fn desugar(
    files: &mut [File],
    sources: &[SourceFile],
    idx: usize,
    imports: &[Option<usize>],
    incomplete: bool,
) -> Desugared {
    let mut file = std::mem::take(&mut files[idx]);
    let mut d = Desugar {
        src: &sources[idx],
        sources,
        idx,
        incomplete,
        faulty: RefCell::default(),
        called: RefCell::default(),
    };
    let mut r = d.file(&mut file, files, imports);
    files[idx] = file;
    r.faulty = d.faulty.into_inner();
    r
}

/// What desugaring a file found wrong.
#[derive(Default)]
pub struct Desugared {
    /// In source order of the definitions, then the rules.
    pub errors: Vec<Diagnostic>,
    /// The offsets of the rules whose definitions could not be substituted.
    pub unexpanded: HashSet<usize>,
    /// The spans of the subterms of predicate bodies whose errors are reported. A predicate
    /// whose body is faulty only in some subterms is still substituted, so that the rest of it
    /// (and of the rules that call it) is checked; these subterms are not checked again.
    pub faulty: HashSet<Span>,
    /// The predicates of the file that nothing calls, their bodies expanded: no rule's
    /// resolution checks them, so the resolver checks each on its own.
    pub uncalled: Vec<UncalledPred>,
}

/// A predicate that no rule and no predicate calls, for the resolver to check its (expanded)
/// body with its parameters standing for any value or op.
pub struct UncalledPred {
    pub params: Vec<Ident>,
    pub body: Expr,
}

/// Why a definition or a rule could not be substituted.
enum Fail {
    Error(Diagnostic),
    /// It names a definition that is faulty (whose error is reported), or, in an incomplete
    /// file, one that no definition in scope has.
    Cascade,
}

impl From<Diagnostic> for Fail {
    fn from(d: Diagnostic) -> Fail {
        Fail::Error(d)
    }
}

type Res<T> = Result<T, Fail>;

/// Keeps `r`'s error, unless it only follows from another.
fn report<T>(errors: &mut Vec<Diagnostic>, r: Res<T>) -> Option<T> {
    match r {
        Ok(x) => Some(x),
        Err(Fail::Error(d)) => {
            errors.push(d);
            None
        }
        Err(Fail::Cascade) => None,
    }
}

/// The errors of the independent parts of one definition or rule (a set's alternatives, the
/// subterms of a predicate body), all of them: a part that fails does not stop the next.
#[derive(Default)]
struct Errors {
    errors: Vec<Diagnostic>,
    /// A part failed only because of an error reported elsewhere.
    cascade: bool,
}

impl Errors {
    /// Keeps `r`'s error; its value, when it has one.
    fn keep<T>(&mut self, r: Res<T>) -> Option<T> {
        match r {
            Ok(x) => Some(x),
            Err(Fail::Error(d)) => {
                self.errors.push(d);
                None
            }
            Err(Fail::Cascade) => {
                self.cascade = true;
                None
            }
        }
    }

    /// `ok` when no part failed; else every error as one, or, when each only follows from an
    /// error reported elsewhere, a cascade.
    fn into_res<T>(self, ok: T) -> Res<T> {
        match Diagnostic::list(self.errors) {
            Some(d) => Err(Fail::Error(d)),
            None if self.cascade => Err(Fail::Cascade),
            None => Ok(ok),
        }
    }
}

/// An op set in scope.
#[derive(Clone)]
struct SetDef {
    /// As written (an `OpSel::OneOf`), spans in `file`.
    raw: OpSel,
    /// The alternatives with every set name replaced, once expanded.
    alts: Option<Vec<OpSel>>,
    file: usize,
    /// The name in the definition.
    name_span: Span,
    /// Its definition is faulty (and reported): what uses it is not substituted.
    failed: bool,
}

/// A predicate in scope (always of the file being desugared).
#[derive(Clone)]
struct PredDef {
    params: Vec<Ident>,
    body: Expr,
    /// Whether `body` has had its own predicate calls expanded and its hygiene checked.
    done: bool,
    name_span: Span,
    /// Its definition is faulty (and reported): what calls it is not substituted.
    failed: bool,
}

#[derive(Clone, Default)]
struct Scope {
    sets: IndexMap<String, SetDef>,
    preds: IndexMap<String, PredDef>,
}

struct Desugar<'a> {
    src: &'a SourceFile,
    sources: &'a [SourceFile],
    idx: usize,
    /// An import of the file failed.
    incomplete: bool,
    /// The subterms of predicate bodies whose own errors are reported.
    faulty: RefCell<HashSet<Span>>,
    /// The predicates called somewhere (by the span of their name).
    called: RefCell<HashSet<Span>>,
}

fn is_class(name: &str) -> bool {
    OpClass::from_name(name).is_some()
}

fn is_function(name: &str) -> bool {
    name == "exists" || Builtin::from_name(name).is_some()
}

impl Desugar<'_> {
    fn at(&self, offset: usize, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::at(self.src, offset, msg)
    }

    /// A second op set named `name` in one scope (declared twice in a file or phase, or also
    /// by an import), at `offset`; the caller notes where both are.
    fn set_twice(&self, offset: usize, name: &Ident) -> Diagnostic {
        self.at(offset, format!("op set `{}` is declared twice", name.name))
    }

    fn where_is(&self, file: usize, span: Span) -> String {
        let src = &self.sources[file];
        let (line, _) = src.line_col(span.0);
        format!("{}:{line}", src.name)
    }

    fn file(&mut self, f: &mut File, files: &[File], imports: &[Option<usize>]) -> Desugared {
        let mut out = Desugared::default();
        let errors = &mut out.errors;
        let mut scope = Scope::default();
        // Op sets of the files this one imports (already expanded), in import order.
        let import_spans: Vec<Span> = f
            .items
            .iter()
            .filter_map(|it| match it {
                Item::Import(im) => Some(im.path_span),
                _ => None,
            })
            .collect();
        for (k, j) in imports.iter().enumerate() {
            let Some(j) = *j else { continue };
            for def in &files[j].defs {
                let Def::OpSet { name, set, .. } = def else {
                    continue;
                };
                // A set the imported file could not expand is left empty there.
                let alts = match set {
                    OpSel::OneOf(v, _) => v.clone(),
                    other => vec![other.clone()],
                };
                if let Some(prev) = scope.sets.get(&name.name) {
                    if prev.file == j {
                        continue;
                    }
                    let at = import_spans.get(k).map_or(0, |s| s.0);
                    errors.push(self
                        .set_twice(at, name)
                        .with_note(format!(
                            "declared at {} and at {}",
                            self.where_is(prev.file, prev.name_span),
                            self.where_is(j, name.span)
                        ))
                        .with_hint("an op set is visible in its file and in the files that import it: give one of them another name"));
                    continue;
                }
                scope.sets.insert(
                    name.name.clone(),
                    SetDef {
                        raw: set.clone(),
                        failed: alts.is_empty(),
                        alts: Some(alts),
                        file: j,
                        name_span: name.span,
                    },
                );
            }
        }
        self.declare(&mut scope, &f.defs, errors);
        // Expand the file's own sets now, so that a mistake in one that no rule uses is still
        // reported, and importers get them expanded (a faulty one empty, which they know).
        for d in &mut f.defs {
            if let Def::OpSet { name, set, .. } = d {
                let r = self.expand_set(&mut scope, &name.name, name.span, &mut Vec::new());
                let alts = report(errors, r).unwrap_or_default();
                *set = OpSel::OneOf(alts, set.span());
            }
        }
        self.check_preds(&mut scope, errors);
        let file_scope = scope;
        // Every predicate expanded, the file's, then each phase's own: those nothing calls are
        // kept once every rule is expanded.
        let mut preds: Vec<PredDef> = file_scope.preds.values().cloned().collect();
        for item in &mut f.items {
            match item {
                Item::Phase(p) => {
                    let mut scope = file_scope.clone();
                    self.declare(&mut scope, &p.defs, errors);
                    for d in &p.defs {
                        if let Def::OpSet { name, .. } = d {
                            let r =
                                self.expand_set(&mut scope, &name.name, name.span, &mut Vec::new());
                            report(errors, r);
                        }
                    }
                    self.check_preds(&mut scope, errors);
                    for r in &mut p.rules {
                        let at = r.span().0;
                        if report(errors, self.rule(&mut scope, r)).is_none() {
                            out.unexpanded.insert(at);
                        }
                    }
                    let own = |d: &&PredDef| {
                        p.defs.iter().any(
                            |x| matches!(x, Def::Pred { name, .. } if name.span == d.name_span),
                        )
                    };
                    preds.extend(scope.preds.values().filter(own).cloned());
                }
                Item::Rule(r) => {
                    let mut scope = file_scope.clone();
                    let at = r.span().0;
                    if report(errors, self.rule(&mut scope, r)).is_none() {
                        out.unexpanded.insert(at);
                    }
                }
                _ => {}
            }
        }
        let called = self.called.borrow();
        out.uncalled = preds
            .into_iter()
            .filter(|d| d.done && !d.failed && !called.contains(&d.name_span))
            .map(|d| UncalledPred {
                params: d.params,
                body: d.body,
            })
            .collect();
        out
    }

    /// Adds the definitions of one level (the file, or a phase) to `scope`; each faulty one is
    /// reported to `errors`.
    fn declare(&self, scope: &mut Scope, defs: &[Def], errors: &mut Vec<Diagnostic>) {
        for d in defs {
            let r = self.declare_one(scope, d);
            report(errors, r);
        }
    }

    fn declare_one(&self, scope: &mut Scope, d: &Def) -> Res<()> {
        match d {
            Def::OpSet { name, set, .. } => {
                if is_class(&name.name) {
                    return Err(Fail::Error(
                        self.at(
                            name.span.0,
                            format!(
                                "`{}` is an op class: an op set needs another name",
                                name.name
                            ),
                        )
                        .with_hint(format!(
                            "op classes: {}",
                            class_names().collect::<Vec<_>>().join(", ")
                        )),
                    ));
                }
                if let Some(prev) = scope.sets.get(&name.name) {
                    return Err(Fail::Error(self.set_twice(name.span.0, name).with_note(
                        format!(
                            "also declared at {}",
                            self.where_is(prev.file, prev.name_span)
                        ),
                    )));
                }
                scope.sets.insert(
                    name.name.clone(),
                    SetDef {
                        raw: set.clone(),
                        alts: None,
                        file: self.idx,
                        name_span: name.span,
                        failed: false,
                    },
                );
            }
            Def::Pred {
                name, params, body, ..
            } => {
                if is_function(&name.name) {
                    return Err(Fail::Error(self.at(
                        name.span.0,
                        format!(
                            "`{}` is a built-in function: a predicate needs another name",
                            name.name
                        ),
                    )));
                }
                if let Some(prev) = scope.preds.get(&name.name) {
                    return Err(Fail::Error(
                        self.at(
                            name.span.0,
                            format!("predicate `{}` is declared twice", name.name),
                        )
                        .with_note(format!(
                            "also declared at {}",
                            self.where_is(self.idx, prev.name_span)
                        )),
                    ));
                }
                let mut seen: IndexSet<&str> = IndexSet::new();
                let twice = params.iter().find(|p| !seen.insert(&p.name));
                // A faulty predicate stays in scope, so that its calls are known to be
                // calls of it.
                scope.preds.insert(
                    name.name.clone(),
                    PredDef {
                        params: params.clone(),
                        body: body.clone(),
                        done: false,
                        name_span: name.span,
                        failed: twice.is_some(),
                    },
                );
                if let Some(p) = twice {
                    return Err(Fail::Error(self.at(
                        p.span.0,
                        format!(
                            "predicate `{}` has two parameters named `{}`",
                            name.name, p.name
                        ),
                    )));
                }
            }
        }
        Ok(())
    }

    // ------------------------------------------------------------------------- op sets

    /// The alternatives of set `name`, expanded (and checked) on first use; `stack` holds the
    /// sets being expanded, for cycles.
    fn expand_set(
        &self,
        scope: &mut Scope,
        name: &str,
        used_at: Span,
        stack: &mut Vec<String>,
    ) -> Res<Vec<OpSel>> {
        let Some(def) = scope.sets.get(name) else {
            return Ok(Vec::new());
        };
        if def.failed {
            return Err(Fail::Cascade);
        }
        if let Some(alts) = &def.alts {
            return Ok(alts.clone());
        }
        if let Some(i) = stack.iter().position(|s| s == name) {
            let mut chain: Vec<&str> = stack[i..].iter().map(String::as_str).collect();
            chain.push(name);
            return Err(Fail::Error(
                self.at(
                    used_at.0,
                    format!("op set `{name}` is defined in terms of itself"),
                )
                .with_note(format!(
                    "{} (a set may name other sets, not itself)",
                    chain.join(" -> ")
                )),
            ));
        }
        let raw = match &def.raw {
            OpSel::OneOf(v, _) => v.clone(),
            other => vec![other.clone()],
        };
        stack.push(name.to_string());
        let alts = self.expand_alts(scope, &raw, stack);
        stack.pop();
        if let Some(d) = scope.sets.get_mut(name) {
            d.failed = alts.is_err();
            d.alts = Some(alts.as_ref().map_or_else(|_| Vec::new(), Clone::clone));
        }
        alts
    }

    /// Checks the alternatives of a set definition (as the resolver checks a pattern's) and
    /// replaces the sets they name by their alternatives.
    fn expand_alts(
        &self,
        scope: &mut Scope,
        alts: &[OpSel],
        stack: &mut Vec<String>,
    ) -> Res<Vec<OpSel>> {
        // Each alternative is checked on its own: every faulty one is reported.
        let mut out = Vec::new();
        let mut errors = Errors::default();
        for a in alts {
            if let Some(more) = errors.keep(self.expand_alt(scope, a, stack)) {
                out.extend(more);
            }
        }
        errors.into_res(out)
    }

    /// One alternative of a set definition: what it stands for.
    fn expand_alt(&self, scope: &mut Scope, a: &OpSel, stack: &mut Vec<String>) -> Res<Vec<OpSel>> {
        Ok(match a {
            OpSel::Name(i) => {
                if Dialect::get().spec(&i.name).is_none() {
                    return Err(Fail::Error(names::unknown_op_in_pattern(i).at(self.src)));
                }
                vec![a.clone()]
            }
            OpSel::Quoted(_) => vec![a.clone()],
            OpSel::Class(c) => {
                if is_class(&c.name) {
                    vec![a.clone()]
                } else if scope.sets.contains_key(&c.name) {
                    self.expand_set(scope, &c.name, c.span, stack)?
                } else {
                    return Err(self.no_such_set(scope, c));
                }
            }
            OpSel::OneOf(v, _) => self.expand_alts(scope, v, stack)?,
            OpSel::With { sel, attrs, span } => {
                // The attribute tests and what they qualify are independent.
                let mut errors = Errors::default();
                for t in attrs {
                    errors.keep(names::alt_test(t).map_err(|p| Fail::Error(p.at(self.src))));
                }
                let inner =
                    errors.keep(self.expand_alts(scope, std::slice::from_ref(&**sel), stack));
                let mut inner = errors.into_res(inner)?.unwrap_or_default();
                let sel = if inner.len() == 1 {
                    inner.remove(0)
                } else {
                    OpSel::OneOf(inner, *span)
                };
                vec![OpSel::With {
                    sel: Box::new(sel),
                    attrs: attrs.clone(),
                    span: *span,
                }]
            }
        })
    }

    /// A name that is neither an op class nor a set in scope; in an incomplete file, perhaps a
    /// set of the import that failed.
    fn no_such_set(&self, scope: &Scope, c: &Ident) -> Fail {
        if self.incomplete {
            return Fail::Cascade;
        }
        Fail::Error(self.unknown_set(scope, c))
    }

    fn unknown_set(&self, scope: &Scope, c: &Ident) -> Diagnostic {
        let classes: Vec<&str> = class_names().collect();
        let names = scope
            .sets
            .keys()
            .map(String::as_str)
            .chain(classes.iter().copied());
        let mut d = self.at(c.span.0, format!("unknown op set or class `{}`", c.name));
        if let Some(h) = did_you_mean(&closest(&c.name, names, 2)) {
            d = d.with_hint(h);
        }
        let sets: Vec<&str> = scope.sets.keys().map(String::as_str).collect();
        d.with_hint(format!(
            "op sets here: {}; op classes: {}; op names have a dialect prefix (pd_op.add)",
            sets.join(", "),
            classes.join(", ")
        ))
    }

    /// Replaces the set names in a selector used by a rule.
    fn subst_sel(&self, scope: &mut Scope, sel: &mut OpSel) -> Res<()> {
        match sel {
            OpSel::Name(_) | OpSel::Quoted(_) => {}
            OpSel::Class(c) => {
                if is_class(&c.name) {
                    return Ok(());
                }
                if scope.sets.contains_key(&c.name) {
                    let span = c.span;
                    let mut alts =
                        self.expand_set(scope, &c.name.clone(), span, &mut Vec::new())?;
                    for a in &mut alts {
                        respan_sel(a, span);
                    }
                    *sel = OpSel::OneOf(alts, span);
                } else if !scope.sets.is_empty() {
                    return Err(self.no_such_set(scope, c));
                }
                // No set in scope: the resolver reports the unknown class.
            }
            OpSel::OneOf(v, _) => {
                // Each alternative on its own: every faulty one is reported.
                let mut flat = Vec::with_capacity(v.len());
                let mut errors = Errors::default();
                for mut a in std::mem::take(v) {
                    let was_name = matches!(&a, OpSel::Class(c) if !is_class(&c.name));
                    errors.keep(self.subst_sel(scope, &mut a));
                    match a {
                        OpSel::OneOf(inner, _) if was_name => flat.extend(inner),
                        a => flat.push(a),
                    }
                }
                *v = flat;
                errors.into_res(())?;
            }
            OpSel::With { sel, .. } => self.subst_sel(scope, sel)?,
        }
        Ok(())
    }

    // ------------------------------------------------------------------------- predicates

    /// Expands every predicate body of `scope` (its calls to other predicates) and checks its
    /// hygiene, whether or not a rule calls it.
    fn check_preds(&self, scope: &mut Scope, errors: &mut Vec<Diagnostic>) {
        let names: Vec<String> = scope.preds.keys().cloned().collect();
        for n in names {
            let r = self.expand_pred(scope, &n, &mut Vec::new());
            report(errors, r);
        }
    }

    /// Expands predicate `name`'s body once; a faulty one is marked so that what calls it is
    /// not reported again.
    fn expand_pred(&self, scope: &mut Scope, name: &str, stack: &mut Vec<String>) -> Res<()> {
        match scope.preds.get(name) {
            None => return Ok(()),
            Some(def) if def.done => return Ok(()),
            Some(def) if def.failed => return Err(Fail::Cascade),
            Some(_) => {}
        }
        let r = self.expand_pred_body(scope, name, stack);
        if let (Err(_), Some(d)) = (&r, scope.preds.get_mut(name)) {
            // Faulty only in some subterms, it is expanded and still substituted.
            d.failed = !d.done;
        }
        r
    }

    fn expand_pred_body(&self, scope: &mut Scope, name: &str, stack: &mut Vec<String>) -> Res<()> {
        let Some(def) = scope.preds.get(name) else {
            return Ok(());
        };
        let mut body = def.body.clone();
        let params: IndexSet<String> = def.params.iter().map(|p| p.name.clone()).collect();
        stack.push(name.to_string());
        let mut locals = IndexSet::new();
        let walked = self.body_expr(scope, name, &params, &mut locals, &mut body, stack);
        stack.pop();
        // A body that is faulty as a whole has nothing left to substitute.
        let whole = self.faulty.borrow().contains(&body.span());
        let (nodes, depth) = measure(&body);
        if nodes > MAX_PRED_NODES || depth > MAX_PRED_DEPTH {
            let span = scope.preds[name].name_span;
            return Err(Fail::Error(self
                .at(
                    span.0,
                    format!("predicate `{name}` expands to an expression too large to check"),
                )
                .with_note(format!(
                    "{nodes} nodes, {depth} levels deep; at most {MAX_PRED_NODES} nodes and {MAX_PRED_DEPTH} levels"
                ))));
        }
        if let (false, Some(d)) = (whole, scope.preds.get_mut(name)) {
            d.body = body;
            d.done = true;
        }
        walked
    }

    /// Walks a predicate body: checks that it mentions only its parameters, renames the names
    /// its `exists(...)` bind apart, and expands the predicates it calls. Every faulty subterm
    /// is reported and noted in [`Desugar::faulty`]; the walk goes on past it, since the other
    /// subterms do not read it.
    fn body_expr(
        &self,
        scope: &mut Scope,
        pred: &str,
        params: &IndexSet<String>,
        locals: &mut IndexSet<String>,
        e: &mut Expr,
        stack: &mut Vec<String>,
    ) -> Res<()> {
        let mut errors = Errors::default();
        let own = self.body_node(scope, pred, params, locals, e, stack, &mut errors);
        if own.is_err() {
            self.faulty.borrow_mut().insert(e.span());
        }
        errors.keep(own);
        errors.into_res(())
    }

    /// The checks of one node of a predicate body: its own error is returned, its subterms'
    /// go to `errors`.
    #[allow(clippy::too_many_arguments)]
    fn body_node(
        &self,
        scope: &mut Scope,
        pred: &str,
        params: &IndexSet<String>,
        locals: &mut IndexSet<String>,
        e: &mut Expr,
        stack: &mut Vec<String>,
        errors: &mut Errors,
    ) -> Res<()> {
        let stray = |me: &Self, i: &Ident| {
            me.at(
                i.span.0,
                format!("predicate `{pred}` mentions `{}`, which is not one of its parameters", i.name),
            )
            .with_hint("a predicate sees only its parameters, the file's parameters, stages and dtypes: pass the value as an argument")
        };
        match e {
            Expr::Var(Var::Value(v)) => {
                if !params.contains(&v.name.name) && !locals.contains(&v.name.name) {
                    return Err(Fail::Error(stray(self, &v.name)));
                }
            }
            Expr::Var(Var::Capture(c)) => {
                if !locals.contains(&c.name) {
                    return Err(Fail::Error(stray(self, c)));
                }
            }
            Expr::Exists(Exists { patterns: pats, .. }) => {
                let mut names = IndexSet::new();
                for p in pats.iter() {
                    pattern_names(p, &mut names);
                }
                let renames: IndexMap<String, String> = names
                    .into_iter()
                    .filter(|n| !params.contains(n))
                    .map(|n| {
                        let fresh = format!("{n}@{pred}");
                        (n, fresh)
                    })
                    .collect();
                for p in pats.iter_mut() {
                    rename_pattern(p, &|i: &Ident| {
                        renames.get(&i.name).map(|n| Ident {
                            name: n.clone(),
                            span: i.span,
                        })
                    });
                }
                locals.extend(renames.into_values());
                for p in pats.iter_mut() {
                    p.exprs_mut(&mut |x| {
                        errors.keep(self.body_expr(scope, pred, params, locals, x, stack));
                    });
                }
                // The op sets its patterns name are the ones in scope where the body is
                // declared: one that is not makes the whole `exists` faulty.
                let mut sets = Errors::default();
                for p in pats.iter_mut() {
                    walk_pattern(p, &mut |x| {
                        if let Visit::Sel(s) = x {
                            sets.keep(self.subst_sel(scope, s));
                        }
                    });
                }
                sets.into_res(())?;
            }
            Expr::Call { func, args, .. } if scope.preds.contains_key(&func.name) => {
                for a in args.iter_mut() {
                    errors.keep(self.body_expr(scope, pred, params, locals, a, stack));
                }
                if let Some(i) = stack.iter().position(|s| *s == func.name) {
                    let mut chain: Vec<&str> = stack[i..].iter().map(String::as_str).collect();
                    chain.push(&func.name);
                    return Err(Fail::Error(self
                        .at(
                            func.span.0,
                            format!("predicate `{}` calls itself", func.name),
                        )
                        .with_note(format!("{} (predicates are substituted when the file is loaded, so they cannot recurse)", chain.join(" -> ")))));
                }
                let callee = func.name.clone();
                // The callee's own errors are reported here, where it is first expanded.
                errors.keep(self.expand_pred(scope, &callee, stack));
                *e = self.call(scope, e)?;
            }
            Expr::Call { func, args, .. } => {
                for a in args.iter_mut() {
                    errors.keep(self.body_expr(scope, pred, params, locals, a, stack));
                }
                if !is_function(&func.name) {
                    return Err(Fail::Error(self.unknown_function(scope, func)));
                }
            }
            _ => {
                e.children_mut(&mut |x| {
                    errors.keep(self.body_expr(scope, pred, params, locals, x, stack));
                });
            }
        }
        Ok(())
    }

    fn unknown_function(&self, scope: &Scope, func: &Ident) -> Diagnostic {
        let mut all: Vec<&str> = scope.preds.keys().map(String::as_str).collect();
        for n in Builtin::names() {
            all.push(n);
        }
        let mut d = self.at(
            func.span.0,
            format!("unknown function or predicate `{}`", func.name),
        );
        if let Some(h) = did_you_mean(&closest(&func.name, all, 2)) {
            d = d.with_hint(h);
        }
        let preds: Vec<&str> = scope.preds.keys().map(String::as_str).collect();
        d.with_hint(format!("predicates here: {}", preds.join(", ")))
    }

    /// The body of the (expanded) predicate called by `call`, its parameters renamed to the
    /// arguments.
    fn call(&self, scope: &Scope, call: &Expr) -> Res<Expr> {
        let Expr::Call { func, args, span } = call else {
            return Ok(call.clone());
        };
        let Some(def) = scope.preds.get(&func.name) else {
            return Ok(call.clone());
        };
        self.called.borrow_mut().insert(def.name_span);
        if def.failed {
            return Err(Fail::Cascade);
        }
        if args.len() != def.params.len() {
            return Err(Fail::Error(
                self.at(
                    func.span.0,
                    format!(
                        "predicate `{}` takes {} argument(s), {} given",
                        func.name,
                        def.params.len(),
                        args.len()
                    ),
                )
                .with_note(format!(
                    "declared at {}: {}({})",
                    self.where_is(self.idx, def.name_span),
                    func.name,
                    def.params
                        .iter()
                        .map(|p| p.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            ));
        }
        let mut map: IndexMap<String, Ident> = IndexMap::new();
        for (p, a) in def.params.iter().zip(args) {
            match a {
                Expr::Var(Var::Value(v)) if v.field.is_none() => {
                    map.insert(p.name.clone(), v.name.clone());
                }
                other => {
                    return Err(Fail::Error(self
                        .at(
                            other.span().0,
                            format!("an argument of predicate `{}` must be a value like %m", func.name),
                        )
                        .with_hint("a predicate's parameters stand for values the rule binds: pass `%x`, not an expression or a result field")))
                }
            }
        }
        let mut body = def.body.clone();
        rename_expr(&mut body, &|i: &Ident| map.get(&i.name).cloned());
        set_top_span(&mut body, *span);
        Ok(body)
    }

    // ------------------------------------------------------------------------- rules

    fn rule(&self, scope: &mut Scope, r: &mut Rule) -> Res<()> {
        let mut res = Ok(());
        match r {
            Rule::Structural(s) => {
                let mut v = |x: Visit<'_>| {
                    if res.is_ok() {
                        res = self.visit(scope, x);
                    }
                };
                for c in &mut s.clauses {
                    match c {
                        Clause::Match(ps) => {
                            for p in ps {
                                walk_pattern(p, &mut v);
                            }
                        }
                        Clause::Where(e) => walk_expr(e, &mut v),
                        Clause::Action(a) => walk_action(a, &mut v),
                    }
                }
                res?;
                Ok(super::let_build::desugar(self.src, s)?)
            }
            Rule::Equational(q) => {
                let mut v = |x: Visit<'_>| {
                    if res.is_ok() {
                        res = self.visit(scope, x);
                    }
                };
                walk_pattern(&mut q.lhs, &mut v);
                if let Some(g) = &mut q.guard {
                    walk_expr(g, &mut v);
                }
                walk_rhs(&mut q.rhs, &mut v);
                res
            }
        }
    }

    fn visit(&self, scope: &mut Scope, x: Visit<'_>) -> Res<()> {
        match x {
            Visit::Sel(s) => self.subst_sel(scope, s),
            Visit::Expr(e) => {
                if self.faulty.borrow().contains(&e.span()) {
                    // A predicate body's subterm whose error is reported.
                    return Ok(());
                }
                if let Expr::Call { func, .. } = e {
                    if scope.preds.contains_key(&func.name) {
                        *e = self.call(scope, e)?;
                    } else if !is_function(&func.name) && !scope.preds.is_empty() {
                        return Err(Fail::Error(self.unknown_function(scope, func)));
                    }
                }
                Ok(())
            }
        }
    }
}

// ----------------------------------------------------------------------------- tree walks

/// A node a rule walk offers for rewriting: an expression (before its children are walked, so a
/// replacement is walked too) or an op selector.
enum Visit<'a> {
    Expr(&'a mut Expr),
    Sel(&'a mut OpSel),
}

fn walk_expr(e: &mut Expr, f: &mut dyn FnMut(Visit<'_>)) {
    f(Visit::Expr(e));
    if let Expr::Exists(x) = e {
        for p in &mut x.patterns {
            walk_pattern(p, f);
        }
        return;
    }
    e.children_mut(&mut |c| walk_expr(c, f));
}

fn walk_pattern(p: &mut OpPattern, f: &mut dyn FnMut(Visit<'_>)) {
    f(Visit::Sel(&mut p.op));
    for a in &mut p.attrs {
        if let AttrPatVal::Equals(e) = &mut a.val {
            walk_expr(e, f);
        }
    }
    for a in &mut p.args {
        if let ValPat::Op(inner) = &mut a.pat {
            walk_pattern(inner, f);
        }
    }
}

fn walk_build(b: &mut Build, f: &mut dyn FnMut(Visit<'_>)) {
    for a in &mut b.args {
        walk_expr(&mut a.value, f);
    }
    for (_, e) in &mut b.attrs {
        walk_expr(e, f);
    }
    if let Some(t) = &mut b.ty {
        walk_expr(t, f);
    }
}

fn walk_str(s: &mut StrLit, f: &mut dyn FnMut(Visit<'_>)) {
    for p in &mut s.parts {
        if let StrPart::Expr(e) = p {
            walk_expr(e, f);
        }
    }
}

fn walk_point(p: &mut InsertPoint, f: &mut dyn FnMut(Visit<'_>)) {
    if let InsertPoint::After(e) | InsertPoint::Before(e) | InsertPoint::RegionEnd { op: e, .. } = p
    {
        walk_expr(e, f);
    }
}

fn walk_action(a: &mut Action, f: &mut dyn FnMut(Visit<'_>)) {
    match a {
        Action::Let { value, .. } => walk_expr(value, f),
        Action::State { name, ty, init, .. } => {
            walk_expr(name, f);
            walk_expr(ty, f);
            walk_build(init, f);
        }
        Action::Insert { at, build, .. } => {
            walk_point(at, f);
            walk_build(build, f);
        }
        Action::Replace { value, with, .. } => {
            walk_expr(value, f);
            walk_expr(with, f);
        }
        Action::SetOperand { value, .. } | Action::AppendOperand { value, .. } => {
            walk_expr(value, f)
        }
        Action::Erase { .. } => {}
        Action::Move { to, .. } | Action::MoveStage { to, .. } => walk_point(to, f),
        Action::SetAttrs { attrs, .. } => {
            for (_, e) in attrs {
                walk_expr(e, f);
            }
        }
        Action::If {
            cond, then, els, ..
        } => {
            walk_expr(cond, f);
            for a in then.iter_mut().chain(els) {
                walk_action(a, f);
            }
        }
        Action::Error { message, .. } => walk_str(message, f),
    }
}

fn walk_rhs(t: &mut Term, f: &mut dyn FnMut(Visit<'_>)) {
    if let Term::Op {
        attrs, children, ..
    } = t
    {
        for (_, e) in attrs {
            walk_expr(e, f);
        }
        for c in children {
            walk_rhs(c, f);
        }
    }
}

/// The `%names` and `$captures` a pattern binds (its name, operands, type and attribute
/// captures, nested patterns included).
fn pattern_names(p: &OpPattern, out: &mut IndexSet<String>) {
    if let Some(b) = &p.bind {
        out.insert(b.name.clone());
    }
    for a in &p.attrs {
        if let AttrPatVal::Capture(c) = &a.val {
            out.insert(c.name.clone());
        }
    }
    for a in &p.args {
        match &a.pat {
            ValPat::Var { name, ty } => {
                out.insert(name.name.clone());
                if let Some(t) = ty {
                    out.insert(t.name.clone());
                }
            }
            ValPat::Wild(_) => {}
            ValPat::Op(inner) => pattern_names(inner, out),
        }
    }
}

type Renamer<'a> = &'a dyn Fn(&Ident) -> Option<Ident>;

fn rename_ident(i: &mut Ident, to: Renamer<'_>) {
    if let Some(n) = to(i) {
        *i = n;
    }
}

fn rename_pattern(p: &mut OpPattern, to: Renamer<'_>) {
    if let Some(b) = &mut p.bind {
        rename_ident(b, to);
    }
    for a in &mut p.attrs {
        match &mut a.val {
            AttrPatVal::Capture(c) => rename_ident(c, to),
            AttrPatVal::Equals(e) => rename_expr(e, to),
            _ => {}
        }
    }
    for a in &mut p.args {
        match &mut a.pat {
            ValPat::Var { name, ty } => {
                rename_ident(name, to);
                if let Some(t) = ty {
                    rename_ident(t, to);
                }
            }
            ValPat::Wild(_) => {}
            ValPat::Op(inner) => rename_pattern(inner, to),
        }
    }
}

/// Renames the `%values` and `$captures` of an expression. A parameter renamed to an argument
/// takes the argument's name *and* span, so "not bound" points at the call.
fn rename_expr(e: &mut Expr, to: Renamer<'_>) {
    match e {
        Expr::Var(Var::Value(v)) => {
            rename_ident(&mut v.name, to);
            if v.field.is_none() {
                v.span = v.name.span;
            }
        }
        Expr::Var(Var::Capture(c)) => rename_ident(c, to),
        Expr::Exists(x) => {
            for p in &mut x.patterns {
                rename_pattern(p, to);
            }
        }
        _ => e.children_mut(&mut |c| rename_expr(c, to)),
    }
}

/// Gives the top node of a substituted body the span of the call it replaces, so a message
/// about the whole guard (`a `where` guard must be a bool`) points at the call.
fn set_top_span(e: &mut Expr, to: Span) {
    match e {
        Expr::Call { span, .. }
        | Expr::Unary { span, .. }
        | Expr::Binary { span, .. }
        | Expr::If { span, .. }
        | Expr::Exists(Exists { span, .. })
        | Expr::List(_, span) => *span = to,
        _ => {}
    }
}

/// Node count and depth of an expression.
fn measure(e: &Expr) -> (usize, usize) {
    fn go(e: &Expr, depth: usize, n: &mut usize, d: &mut usize) {
        *n += 1;
        *d = (*d).max(depth);
        e.children(&mut |c| go(c, depth + 1, n, d));
    }
    let (mut n, mut d) = (0, 0);
    go(e, 1, &mut n, &mut d);
    (n, d)
}

/// Gives every span inside a substituted op selector the span of the set name it replaces.
fn respan_sel(s: &mut OpSel, to: Span) {
    match s {
        OpSel::Name(i) | OpSel::Quoted(i) | OpSel::Class(i) => i.span = to,
        OpSel::OneOf(v, span) => {
            *span = to;
            for a in v {
                respan_sel(a, to);
            }
        }
        OpSel::With { sel, attrs, span } => {
            *span = to;
            respan_sel(sel, to);
            for a in attrs {
                a.key.span = to;
                match &mut a.val {
                    AttrPatVal::Present(s) | AttrPatVal::Absent(s) => *s = to,
                    AttrPatVal::Capture(c) => c.span = to,
                    AttrPatVal::Equals(e) => respan_literal(e, to),
                }
            }
        }
    }
}

fn respan_literal(e: &mut Expr, to: Span) {
    match e {
        Expr::Lit(_, s) | Expr::Str(_, s) => *s = to,
        Expr::Var(Var::Bare(i) | Var::Capture(i)) => i.span = to,
        Expr::List(v, s) => {
            *s = to;
            for x in v {
                respan_literal(x, to);
            }
        }
        Expr::Unary { e, span, .. } => {
            *span = to;
            respan_literal(e, to);
        }
        _ => {}
    }
}
