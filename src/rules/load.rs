//! Loading rule files: reading them, following imports (cycles, conditional `import ... if p`),
//! giving parameters their values (defaults, `--set`, constraints) and laying the rules out as
//! phases in run order.
//!
//! Loading is separate from resolving (`super::resolver`) because the two answer different
//! questions: this module decides *which* rules run and with which parameter values; the
//! resolver decides whether each file, on its own, means something against the dialect table,
//! and what each of its rules compiles to. Every file is resolved, even an import whose
//! condition is false, so a mistake in `hoist_reduce.rw` shows up whatever `--set` says; only
//! the inclusion of its phases depends on the condition.
//!
//! Every independent error is reported, as a compiler does, in source order, files in the order
//! they are read (errors about the invocation, such as a bad `--set`, first): a file that cannot
//! be read or parsed, each faulty parameter and import value, each faulty op declaration, and
//! what the expander and the resolver find in every file. What only follows from a reported
//! error is not reported: a faulty parameter or op declaration is left out and named (the
//! resolver's `Faults`), so what uses it is not checked against it, and a file whose import
//! failed does not report names it does not know, which the import may have brought. Phases
//! are laid out, and rule names across files and `require`s checked, whether or not the files
//! resolve, so those errors come with the files' own; a file whose inclusion is unknown (its
//! import failed, or its import condition cannot be evaluated, as when it names a faulty
//! parameter) is left out, and no `require` after it is checked, since the rule it names may
//! be in what is missing.
//!
//! What is refused here (each a [`Diagnostic`] at `file:line:col` with the source line and a
//! caret, or a usage error naming the parameter):
//! - imports: the file exists and is readable (bounded, UTF-8), no import cycle;
//! - parameters: a known type, a default of that type, the same declaration wherever a name is
//!   declared twice; `--set` values parse as the type; a required one is set; constraints hold
//!   (a default or an import's `with` value that breaks one is refused where it is written; a
//!   `--set` value, as bad usage);
//! - phases: unique rule names over everything included; a `require` names a rule that runs in
//!   its phase or an earlier one.

use super::ast::*;
use super::compiled::CompiledRule;
use super::eval::{bare_name, eval_const, eval_const_str, mentions};
use super::parse::parse_file;
use super::require::loaded_require;
use super::resolver::{Faults, Ids, Resolver};
use super::suggest::{closest, did_you_mean};
use super::{LoadedRule, Param, ParamType, Phase, RuleSet};
use crate::diag::{Diagnostic, SourceFile};
use crate::value::Val;
use indexmap::{IndexMap, IndexSet};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Loads `paths` (each with its imports) and applies the `--set name=value` pairs.
pub fn load(paths: &[PathBuf], sets: &[(String, String)]) -> Result<RuleSet, Diagnostic> {
    load_with_path(paths, sets, &[])
}

/// [`load`] with an import search path: an import not found relative to the importing file is
/// looked for in each of `search` in order (`--rules-path DIR`, `IRW_RULES_PATH`).
pub fn load_with_path(
    paths: &[PathBuf],
    sets: &[(String, String)],
    search: &[PathBuf],
) -> Result<RuleSet, Diagnostic> {
    let mut l = Loader {
        search: search.to_vec(),
        ..Loader::default()
    };
    let mut roots = Vec::new();
    for p in paths {
        let root = l.load_file(p, p, None);
        l.follow_imports();
        match root {
            Some(r) => roots.push(r),
            None => l.missing_root = true,
        }
    }
    l.finish(&roots, sets)
}

/// Loads rule text held in memory (tests, `--rules -`). Imports are resolved against `dir`.
pub fn load_str(
    name: &str,
    text: &str,
    dir: &Path,
    sets: &[(String, String)],
) -> Result<RuleSet, Diagnostic> {
    let mut l = Loader::default();
    let root = l.add_source(dir.join(name), SourceFile::new(name, text));
    l.follow_imports();
    l.missing_root = root.is_none();
    l.finish(root.as_slice(), sets)
}

/// Splits a `--set name=value` argument. The value is kept as written: a string parameter
/// takes it whole (`--set 'sep= / '`), and a number or bool is read without the blanks
/// around it ([`super::ParamType::parse`]).
pub fn parse_set(arg: &str) -> Result<(String, String), Diagnostic> {
    match arg.split_once('=') {
        Some((n, v)) if !n.trim().is_empty() => Ok((n.trim().to_string(), v.to_string())),
        _ => Err(
            Diagnostic::error(format!("--set `{arg}`: expected name=value"))
                .with_hint("for example --set k_steps=4")
                .as_usage(),
        ),
    }
}

/// Largest rule file irw reads: rule files are hand-written and small; the bound keeps
/// `import "/dev/zero"` from exhausting memory.
const MAX_RULE_FILE_BYTES: u64 = 4 << 20;

/// Largest total of all rule files one run reads, imports included: 24 imports of
/// [`MAX_RULE_FILE_BYTES`] each must end in this error, not in an allocation failure.
const MAX_RULE_BYTES_TOTAL: u64 = 16 << 20;

/// Reads `path`, at most [`MAX_RULE_FILE_BYTES`] and at most `budget` bytes (what is left of
/// [`MAX_RULE_BYTES_TOTAL`]).
/// Why a rule file could not be read: the system's error or a size limit, or bytes that are
/// not UTF-8 (reported at the first one, in the file's text read leniently).
enum ReadError {
    Io(std::io::Error),
    NotUtf8 { lossy: String, at: usize },
}

impl From<std::io::Error> for ReadError {
    fn from(e: std::io::Error) -> Self {
        ReadError::Io(e)
    }
}

fn read_bounded(path: &Path, budget: u64) -> Result<String, ReadError> {
    use std::io::Read;
    let limit = MAX_RULE_FILE_BYTES.min(budget);
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(limit + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_RULE_FILE_BYTES {
        return Err(std::io::Error::other(format!(
            "it is larger than {} MiB",
            MAX_RULE_FILE_BYTES >> 20
        ))
        .into());
    }
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::other(format!(
            "the rule files of this run would be larger than {} MiB together",
            MAX_RULE_BYTES_TOTAL >> 20
        ))
        .into());
    }
    // A UTF-8 byte order mark (some editors write one) is not part of the rules.
    if bytes.starts_with(crate::source_text::UTF8_BOM) {
        bytes.drain(..crate::source_text::UTF8_BOM.len());
    }
    String::from_utf8(bytes).map_err(|e| ReadError::NotUtf8 {
        at: e.utf8_error().valid_up_to(),
        // The lenient text has the same prefix: `at` is an offset into it.
        lossy: String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

#[derive(Default)]
struct Loader {
    sources: Vec<SourceFile>,
    files: Vec<File>,
    paths: IndexMap<PathBuf, usize>,
    /// Paths that could not be loaded (unreadable, or not parsed): their error is reported once,
    /// and a later import of one only makes its importer incomplete.
    broken: HashSet<PathBuf>,
    /// The files whose imports are being followed, each importing the next (an import cycle
    /// is an import of one of them).
    stack: Vec<Importing>,
    /// Per file: whether it is on [`Loader::stack`].
    importing: Vec<bool>,
    /// Per file: the file index each import resolves to, in item order; `None` when the import
    /// failed (its error is reported).
    imports: Vec<Vec<Option<usize>>>,
    /// Per file: whether an import of it failed. What that import would have brought (op sets,
    /// parameters, declared ops) is unknown, so the file's errors about unknown names are not
    /// reported: they may only follow from the import's.
    incomplete: Vec<bool>,
    /// Per file: the offsets of its rules whose definitions could not be substituted (the
    /// expander reported why): the resolver does not check them again.
    unexpanded: Vec<HashSet<usize>>,
    /// Per file: the subterms of its predicate bodies whose errors the expander reported.
    faulty: Vec<HashSet<Span>>,
    /// Per file: its predicates that nothing calls, for the resolver to check on their own.
    uncalled: Vec<Vec<super::expand::UncalledPred>>,
    /// Errors found while reading, parsing and expanding files.
    errors: Vec<Diagnostic>,
    /// The name of every file read, in the order read, a file that does not parse included:
    /// the order errors are reported in.
    read: Vec<String>,
    /// Where imports not found beside the importing file are looked for, in order.
    search: Vec<PathBuf>,
    /// Bytes of rule text read so far (bounded by [`MAX_RULE_BYTES_TOTAL`]).
    bytes_read: u64,
    /// A file named on the command line could not be loaded: its rules, which would run first,
    /// are unknown.
    missing_root: bool,
}

/// A file whose imports are being followed. The loader walks the import graph depth first
/// with an explicit stack of these rather than by recursion, so that a chain of imports as
/// long as the rule files' bytes allow costs heap, never the thread's stack.
struct Importing {
    file: usize,
    /// Its imports, path and span, in item order.
    imports: Vec<(String, Span)>,
    /// How many of them have been followed.
    next: usize,
    /// The directory of the file, and that directory as messages show it.
    dir: PathBuf,
    shown_dir: PathBuf,
}

/// The phases of a load in run order, as far as they are known.
#[derive(Default)]
struct Layout {
    phases: Vec<Phase>,
    included: IndexSet<usize>,
    /// Errors found laying out (an import condition or a `require` count that cannot be
    /// evaluated).
    errors: Vec<Diagnostic>,
    /// The index of the first phase that may be missing something: an import that failed, or
    /// whose condition could not be evaluated, would have put its phases there. What is checked
    /// against the phases before it (a `require`) cannot follow from what is missing.
    uncertain: Option<usize>,
}

impl Loader {
    /// Reads and parses `path`, shown in messages as `shown` (an import's path relative to
    /// where the importing file was named, so `rules/grad_merge.rw` imports
    /// `rules/master_grad.rw`, not an absolute path); a file new to the load goes on the stack
    /// for [`Loader::follow_imports`].
    fn load_file(
        &mut self,
        path: &Path,
        shown: &Path,
        from: Option<(usize, Span)>,
    ) -> Option<usize> {
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if self.broken.contains(&key) {
            return None;
        }
        if let Some(&i) = self.paths.get(&key) {
            if self.importing[i] {
                let (f, span) = from.unwrap_or((i, (0, 0)));
                let chain: Vec<&str> = self
                    .stack
                    .iter()
                    .map(|x| self.sources[x.file].name.as_str())
                    .collect();
                self.errors.push(
                    Diagnostic::at(
                        &self.sources[f],
                        span.0,
                        format!(
                            "import cycle: {} -> {}",
                            chain.join(" -> "),
                            self.sources[i].name
                        ),
                    )
                    .with_hint("a rule file cannot import itself, directly or through others"),
                );
                return None;
            }
            return Some(i);
        }
        // An import that is a FIFO or a device could block forever (or never end): refused.
        if let (Some((f, span)), Ok(m)) = (from, std::fs::metadata(path)) {
            if !m.is_file() && !m.is_dir() {
                self.errors.push(Diagnostic::at(
                    &self.sources[f],
                    span.0,
                    format!(
                        "cannot read rule file `{}`: an import must be a regular file, this is a FIFO or a device",
                        path.display()
                    ),
                ));
                self.broken.insert(key);
                return None;
            }
        }
        let text = match read_bounded(path, MAX_RULE_BYTES_TOTAL.saturating_sub(self.bytes_read)) {
            Ok(text) => text,
            Err(ReadError::NotUtf8 { lossy, at }) => {
                let src = SourceFile::new(shown.display().to_string(), lossy);
                let mut d = Diagnostic::at(&src, at, "the rule file is not valid UTF-8")
                    .with_hint("rule files are UTF-8 text");
                if let Some((f, span)) = from {
                    let (line, col) = self.sources[f].line_col(span.0);
                    d = d.with_note(format!("imported at {}:{line}:{col}", self.sources[f].name));
                }
                self.errors.push(d);
                self.broken.insert(key);
                return None;
            }
            Err(ReadError::Io(e)) => {
                let msg = format!("cannot read rule file `{}`: {e}", path.display());
                self.errors.push(match from {
                    Some((f, span)) => Diagnostic::at(&self.sources[f], span.0, msg).with_hint(
                        "import paths are relative to the importing file, then to each \
                         directory of --rules-path and IRW_RULES_PATH",
                    ),
                    None => Diagnostic::error(msg),
                });
                self.broken.insert(key);
                return None;
            }
        };
        self.bytes_read += text.len() as u64;
        self.add_source(key, SourceFile::new(shown.display().to_string(), text))
    }

    /// Parses `src` and puts it on the stack of files whose imports are to be followed
    /// ([`Loader::follow_imports`]). `None` when it does not parse: a parse error stops that
    /// file (and only that file).
    fn add_source(&mut self, key: PathBuf, src: SourceFile) -> Option<usize> {
        self.read.push(src.name.clone());
        let file = match parse_file(&src) {
            Ok(file) => file,
            Err(e) => {
                self.errors.push(e);
                self.broken.insert(key);
                return None;
            }
        };
        let idx = self.sources.len();
        let imports: Vec<(String, Span)> = (file.items.iter())
            .filter_map(|it| match it {
                Item::Import(im) => Some((im.path.clone(), im.path_span)),
                _ => None,
            })
            .collect();
        let shown_dir = Path::new(&src.name)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        self.sources.push(src);
        self.files.push(file);
        self.imports.push(Vec::new());
        self.incomplete.push(false);
        self.unexpanded.push(HashSet::new());
        self.faulty.push(HashSet::new());
        self.uncalled.push(Vec::new());
        self.importing.push(true);
        self.stack.push(Importing {
            file: idx,
            imports,
            next: 0,
            dir: key.parent().map(Path::to_path_buf).unwrap_or_default(),
            shown_dir,
        });
        self.paths.insert(key, idx);
        Some(idx)
    }

    /// Follows the imports of the files on the stack, depth first, each file's in item order;
    /// a file whose imports are all loaded has its definitions substituted (they may name what
    /// its imports declare) and leaves the stack.
    fn follow_imports(&mut self) {
        while let Some(top) = self.stack.last_mut() {
            let Some((p, span)) = top.imports.get(top.next).cloned() else {
                let idx = top.file;
                self.desugar(idx);
                self.stack.pop();
                self.importing[idx] = false;
                continue;
            };
            top.next += 1;
            let idx = top.file;
            // Beside the importing file first, then along the search path.
            let (path, shown) = match self
                .search
                .iter()
                .find(|d| !top.dir.join(&p).exists() && d.join(&p).is_file())
            {
                Some(d) => (d.join(&p), d.join(&p)),
                None => (top.dir.join(&p), top.shown_dir.join(&p)),
            };
            let target = self.load_file(&path, &shown, Some((idx, span)));
            self.incomplete[idx] |= target.is_none();
            self.imports[idx].push(target);
        }
    }

    /// Substitutes the `ops` and `pred` definitions of file `idx` into plain rule syntax (its
    /// imports are loaded: their sets are known).
    fn desugar(&mut self, idx: usize) {
        let expanded = super::expand::desugar(
            &mut self.files,
            &self.sources,
            idx,
            &self.imports[idx],
            self.incomplete[idx],
        );
        self.errors.extend(expanded.errors);
        self.unexpanded[idx] = expanded.unexpanded;
        self.faulty[idx] = expanded.faulty;
        self.uncalled[idx] = expanded.uncalled;
    }

    fn finish(mut self, roots: &[usize], sets: &[(String, String)]) -> Result<RuleSet, Diagnostic> {
        let (params, failed_params) = self.params(sets);
        let lookup = |n: &str| params.get(n).map(|p| p.value.clone());
        let decls: Vec<Vec<OpDecl>> = self
            .files
            .iter()
            .map(|f| {
                f.items
                    .iter()
                    .filter_map(|it| match it {
                        Item::Op(d) => Some(d.clone()),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        let pairs: Vec<(&SourceFile, &[OpDecl])> = self
            .sources
            .iter()
            .zip(&decls)
            .map(|(s, d)| (s, d.as_slice()))
            .collect();
        let collected = super::decl::collect(&pairs, &lookup, &|n: &str| failed_params.contains(n));
        self.errors.extend(collected.errors);
        let ops = collected.table;
        // Every file is resolved, imported or not: each rule checked and lowered in one pass, a
        // structural rule to its compiled form, an equational one to e-graph rules. Rules keep
        // their place in the rule set's numbering of builds and `exists` whichever phases take
        // them. The errors of every file are reported together with the loader's, in order.
        let mut ids = Ids::default();
        let mut resolved: HashMap<(usize, usize), CompiledRule> = HashMap::new();
        let mut lowered: HashMap<(usize, usize), Vec<crate::egraph::EqRule>> = HashMap::new();
        let mut errors = Vec::new();
        for (i, f) in self.files.iter().enumerate() {
            let faults = Faults {
                params: &failed_params,
                ops: &collected.failed,
                incomplete: self.incomplete[i],
                unexpanded: &self.unexpanded[i],
                exprs: &self.faulty[i],
            };
            let mut resolver = Resolver::new(&self.sources[i], i, &params, &ops, ids, faults);
            let found = resolver.resolve_file(f);
            let found = resolver.check_uncalled(&self.uncalled[i], found);
            errors.extend(found);
            ids = resolver.ids;
            lowered.extend(resolver.lowered.into_iter().map(|(at, g)| ((i, at), g)));
            resolved.extend(resolver.resolved.into_iter().map(|(at, c)| ((i, at), c)));
        }
        // After the resolver's: where both meet one mistake (a constraint is resolved and
        // evaluated), the resolver's words, which carry hints, are the ones kept.
        errors.append(&mut self.errors);
        // Expand imports in place, in order. Each file named on the command line is applied
        // with its imports, each of them once within it, as if irw ran once per `--rules`: a
        // file given twice (canonicalize before and after a pass) runs twice. Laid out even
        // when a file has errors, so that what is checked across files is reported with them.
        let mut layout = Layout {
            uncertain: self.missing_root.then_some(0),
            ..Layout::default()
        };
        for (i, &r) in roots.iter().enumerate() {
            let first = layout.phases.len();
            layout.included.clear();
            self.expand(r, &lookup, &mut layout);
            for ph in &mut layout.phases[first..] {
                ph.root = i;
            }
        }
        name_repeated_phases(&mut layout.phases);
        // An import condition or a `require` count that cannot be evaluated may only follow
        // from a reported error (a faulty parameter, a name an import that failed declares).
        if errors.is_empty() {
            errors.append(&mut layout.errors);
        }
        errors.extend(self.across_files(&layout));
        if let Some(all) = self.in_order(errors) {
            return Err(all);
        }
        let mut phases = layout.phases;
        // The engines run the resolved forms, never the syntax trees again. Every rule was
        // resolved with its file above: a phase holds the items of files the loader read, and
        // it resolved every one of them. A file applied twice has each rule twice: copies of
        // its one resolution.
        for ph in &mut phases {
            for (index, lr) in ph.rules.iter().enumerate() {
                let key = (lr.file, lr.rule.span().0);
                match &lr.rule {
                    Rule::Equational(_) => {
                        if let Some(rules) = lowered.get(&key).cloned() {
                            let origin = format!("{}:{}", self.sources[lr.file].name, lr.line);
                            ph.equational
                                .extend(rules.into_iter().map(|g| g.origin(&origin)));
                        }
                    }
                    Rule::Structural(_) => {
                        if let Some(mut c) = resolved.get(&key).cloned() {
                            c.index = index;
                            ph.structural.push(c);
                        }
                    }
                }
            }
        }
        Ok(RuleSet {
            builds: ids.builds,
            exists: ids.exists,
            sources: self.sources,
            params,
            phases,
            roots: roots.to_vec(),
            ops,
        })
    }

    /// Lays out the phases of `f`, its imports' in place, into `layout`. An import that failed,
    /// or whose condition cannot be evaluated, is left out, and what comes after it in run
    /// order is marked as perhaps missing something ([`Layout::uncertain`]). The import graph
    /// is walked with an explicit stack (see [`Importing`]).
    fn expand(&self, f: usize, params: &dyn Fn(&str) -> Option<Val>, layout: &mut Layout) {
        /// A file being laid out: its items not laid out yet, and the phase its rules outside
        /// a phase go to, if one is open.
        struct Cursor<'f> {
            file: usize,
            items: std::slice::Iter<'f, Item>,
            imports: std::slice::Iter<'f, Option<usize>>,
            implicit: Option<usize>,
            line_starts: Vec<usize>,
        }
        let cursor = |f: usize| Cursor {
            file: f,
            items: self.files[f].items.iter(),
            imports: self.imports[f].iter(),
            implicit: None,
            line_starts: line_starts(&self.sources[f]),
        };
        if !layout.included.insert(f) {
            return;
        }
        let mut stack = vec![cursor(f)];
        while let Some(top) = stack.last_mut() {
            let Some(item) = top.items.next() else {
                stack.pop();
                continue;
            };
            let f = top.file;
            let src = &self.sources[f];
            match item {
                Item::Import(im) => {
                    let target = top.imports.next().copied().flatten();
                    let take = match &im.cond {
                        None => Ok(true),
                        Some(c) => const_bool(src, params, c, "an import condition"),
                    };
                    // What follows an import taken runs after it, in a phase of its own.
                    if !matches!(take, Ok(false)) {
                        top.implicit = None;
                    }
                    match (target, take) {
                        (Some(target), Ok(true)) => {
                            if layout.included.insert(target) {
                                stack.push(cursor(target));
                            }
                        }
                        (_, Ok(false)) => {}
                        (None, Ok(true)) => {
                            layout.uncertain.get_or_insert(layout.phases.len());
                        }
                        (_, Err(e)) => {
                            layout.errors.push(e);
                            layout.uncertain.get_or_insert(layout.phases.len());
                        }
                    }
                }
                Item::Phase(p) => {
                    let requires = (p.requires.iter())
                        .filter_map(|q| self.require(f, params, q, &mut layout.errors))
                        .collect();
                    layout.phases.push(Phase {
                        name: p.name.name.clone(),
                        rules: (p.rules.iter())
                            .map(|r| self.loaded(f, &top.line_starts, r))
                            .collect(),
                        structural: Vec::new(),
                        equational: Vec::new(),
                        requires,
                        root: 0,
                    });
                    top.implicit = None;
                }
                Item::Rule(_) | Item::Require(_) => {
                    let phases = &mut layout.phases;
                    let i = *top.implicit.get_or_insert_with(|| {
                        let stem = Path::new(&src.name)
                            .file_stem()
                            .map_or("rules".to_string(), |s| s.to_string_lossy().into_owned());
                        phases.push(Phase {
                            name: stem,
                            rules: Vec::new(),
                            structural: Vec::new(),
                            equational: Vec::new(),
                            requires: Vec::new(),
                            root: 0,
                        });
                        phases.len() - 1
                    });
                    match item {
                        Item::Rule(r) => {
                            let rule = self.loaded(f, &top.line_starts, r);
                            layout.phases[i].rules.push(rule);
                        }
                        Item::Require(q) => {
                            if let Some(q) = self.require(f, params, q, &mut layout.errors) {
                                layout.phases[i].requires.push(q);
                            }
                        }
                        _ => {}
                    }
                }
                Item::Param(_) | Item::Op(_) => {}
            }
        }
    }

    /// A `require` of file `f` as its phase holds it; one whose count or message cannot be
    /// evaluated is left out, its error kept.
    fn require(
        &self,
        f: usize,
        params: &dyn Fn(&str) -> Option<Val>,
        q: &Require,
        errors: &mut Vec<Diagnostic>,
    ) -> Option<super::LoadedRequire> {
        loaded_require(&self.sources[f], f, params, q)
            .map_err(|e| errors.push(e))
            .ok()
    }

    /// What is checked across the files laid out: rule names are unique over each command-line
    /// file and its imports (a rule defined twice in one file is the resolver's to report; two
    /// files given to `--rules` apply as two runs would, so each may name its rules freely),
    /// and a `require` names a rule of its phase or of an earlier one of its command-line
    /// file, checked only where nothing before it may be missing ([`Layout::uncertain`]): the
    /// rule may be in what is.
    fn across_files(&self, layout: &Layout) -> Vec<Diagnostic> {
        let phases = &layout.phases;
        let mut errors = Vec::new();
        let mut seen: IndexMap<(usize, String), (usize, Span)> = IndexMap::new();
        for ph in phases {
            for r in &ph.rules {
                let name = r.rule.name();
                match seen.get(&(ph.root, name.name.clone())) {
                    Some(&(f, _)) if f == r.file => {}
                    Some(&(f, first)) => errors.push(super::resolver::names::rule_defined_twice(
                        &self.sources[r.file],
                        name,
                        &self.sources[f],
                        first,
                    )),
                    None => {
                        seen.insert((ph.root, name.name.clone()), (r.file, name.span));
                    }
                }
            }
        }
        let mut known: IndexSet<&str> = IndexSet::new();
        for (i, ph) in phases.iter().enumerate() {
            if i > 0 && phases[i - 1].root != ph.root {
                known.clear();
            }
            known.extend(ph.rules.iter().map(|r| r.rule.name().name.as_str()));
            if layout.uncertain.is_some_and(|u| i >= u) {
                break;
            }
            for q in &ph.requires {
                for rule in q.rules.iter().filter(|r| !known.contains(r.name.as_str())) {
                    let name = &rule.name;
                    let src = &self.sources[q.file];
                    let mut d = Diagnostic::at(
                        src,
                        rule.span.0,
                        format!(
                            "`require {name}`: no rule `{name}` runs in this phase or before it"
                        ),
                    );
                    if let Some((f, s)) = seen.get(&(ph.root, name.clone())) {
                        let (line, _) = self.sources[*f].line_col(s.0);
                        d = d.with_note(format!(
                            "`{name}` ({}:{line}) runs in a later phase: require it there or after",
                            self.sources[*f].name
                        ));
                    } else if let Some(h) = did_you_mean(&closest(name, known.iter().copied(), 3)) {
                        d = d.with_hint(h);
                    }
                    errors.push(d);
                }
            }
        }
        errors
    }

    fn loaded(&self, f: usize, line_starts: &[usize], r: &Rule) -> LoadedRule {
        let line = line_starts.partition_point(|&s| s <= r.span().0);
        LoadedRule {
            file: f,
            line,
            rule: r.clone(),
        }
    }

    /// The parameters with their values, and the names of those whose declaration or value is
    /// faulty. Every error is reported (into [`Loader::errors`]); a faulty parameter is left out
    /// of the map, and what names it (a constraint, an import's value, a default of an op
    /// declaration, a rule) is not checked against it: its own error says what is wrong.
    fn params(&mut self, sets: &[(String, String)]) -> (IndexMap<String, Param>, HashSet<String>) {
        let mut params: IndexMap<String, Param> = IndexMap::new();
        let mut failed: HashSet<String> = HashSet::new();
        let mut errors = Vec::new();
        let mut decls: IndexMap<String, (usize, &ParamDecl)> = IndexMap::new();
        let declared: HashSet<&str> = (self.files.iter())
            .flat_map(|f| &f.items)
            .filter_map(|item| match item {
                Item::Param(p) => Some(p.name.name.as_str()),
                _ => None,
            })
            .collect();
        for (fi, file) in self.files.iter().enumerate() {
            let src = &self.sources[fi];
            for item in &file.items {
                let Item::Param(p) = item else { continue };
                if let Some((pf, prev)) = decls.get(&p.name.name) {
                    // Files that import a shared one may each declare its parameters; one file
                    // declares a name once.
                    if *pf == fi {
                        let (line, _) = src.line_col(prev.span.0);
                        errors.push(
                            Diagnostic::at(
                                src,
                                p.name.span.0,
                                format!(
                                    "parameter `{}` is declared twice in this file",
                                    p.name.name
                                ),
                            )
                            .with_note(format!("first declared at {}:{line}", src.name))
                            .with_hint("remove one of the declarations"),
                        );
                        continue;
                    }
                    let same_ty = prev.ty.name == p.ty.name;
                    let same_default = match (&prev.default, &p.default) {
                        (None, None) => true,
                        (Some(a), Some(b)) => same_constant(a, b),
                        _ => false,
                    };
                    if !same_ty || !same_default {
                        let (line, _) = self.sources[*pf].line_col(prev.span.0);
                        errors.push(
                            Diagnostic::at(
                                src,
                                p.name.span.0,
                                format!(
                                    "parameter `{}` is declared differently in two files",
                                    p.name.name
                                ),
                            )
                            .with_note(format!(
                                "also declared at {}:{line}",
                                self.sources[*pf].name
                            ))
                            .with_hint(
                                "declare a shared parameter with the same type and default everywhere",
                            ),
                        );
                    }
                    continue;
                }
                decls.insert(p.name.name.clone(), (fi, p));
                let Some(ty) = ParamType::from_name(&p.ty.name) else {
                    errors.push(
                        Diagnostic::at(
                            src,
                            p.ty.span.0,
                            format!("unknown parameter type `{}`", p.ty.name),
                        )
                        .with_hint("parameter types are int, float, bool and string"),
                    );
                    failed.insert(p.name.name.clone());
                    continue;
                };
                let default = match &p.default {
                    None => None,
                    Some(e) => {
                        // A default is a constant, evaluated before any parameter has a value:
                        // naming one would otherwise read as an unknown name.
                        if let Some(i) = bare_name(e, &|n| declared.contains(n)) {
                            errors.push(
                                Diagnostic::at(
                                    src,
                                    i.span.0,
                                    format!(
                                        "the default of `{}` names the parameter `{}`: a default is a constant",
                                        p.name.name, i.name
                                    ),
                                )
                                .with_hint("compute from parameters where the value is used, e.g. `value: 1.0 / k_steps` in a rule"),
                            );
                            failed.insert(p.name.name.clone());
                            continue;
                        }
                        let v = eval_const(e, &|_| None)
                            .map_err(|er| Diagnostic::at(src, er.span.0, er.message))
                            .and_then(|v| {
                                ty.coerce(v).map_err(|v| {
                                    Diagnostic::at(
                                        src,
                                        e.span().0,
                                        format!(
                                            "default of `{}` is {}, but the parameter is {}",
                                            p.name.name,
                                            v.a_kind(),
                                            ty.name()
                                        ),
                                    )
                                })
                            });
                        match v {
                            Ok(v) => Some(v),
                            Err(d) => {
                                errors.push(d);
                                failed.insert(p.name.name.clone());
                                continue;
                            }
                        }
                    }
                };
                params.insert(
                    p.name.name.clone(),
                    Param {
                        ty,
                        value: default.unwrap_or(Val::Bool(false)),
                        set: false,
                    },
                );
            }
        }
        // Values importing files give (`import "x.rw" with {name: value};`), below `--set`.
        let imported = self.import_values(&params, &mut failed, &mut errors);
        // `--set` values. A name no file declares may be one a file that failed to load
        // declares: only its error is reported then.
        let all_loaded = self.incomplete.iter().all(|i| !i) && self.broken.is_empty();
        let mut from_command_line: HashSet<&str> = HashSet::new();
        for (name, raw) in sets {
            if failed.contains(name) {
                continue;
            }
            let Some(p) = params.get_mut(name) else {
                if !all_loaded {
                    continue;
                }
                let known: Vec<&str> = decls.keys().map(|s| s.as_str()).collect();
                let mut d = Diagnostic::error(format!(
                    "--set {name}={raw}: no rule file declares a parameter `{name}`"
                ));
                d = if known.is_empty() {
                    d.with_hint("the loaded rule files declare no parameters")
                } else {
                    d.with_hint(format!("known parameters: {}", known.join(", ")))
                };
                errors.push(d.as_usage());
                continue;
            };
            match p.ty.parse(raw) {
                Some(v) => {
                    p.value = v;
                    p.set = true;
                    from_command_line.insert(name.as_str());
                }
                None => {
                    errors.push(
                        Diagnostic::error(format!(
                            "--set {name}={raw}: `{raw}` is not a valid {}",
                            p.ty.name()
                        ))
                        .with_hint(format!("parameter `{name}` is {}", p.ty.name()))
                        .as_usage(),
                    );
                    failed.insert(name.clone());
                }
            }
        }
        for (name, (v, _)) in &imported {
            if let Some(p) = params.get_mut(name) {
                if !p.set {
                    p.value = v.clone();
                    p.set = true;
                }
            }
        }
        for (name, (fi, d)) in &decls {
            let Some(p) = params.get(name) else { continue };
            if !p.set && d.default.is_none() && !failed.contains(name) {
                let (line, _) = self.sources[*fi].line_col(d.span.0);
                errors.push(
                    Diagnostic::error(format!(
                        "missing required parameter `{name}` ({})",
                        p.ty.name()
                    ))
                    .with_hint(format!("pass --set {name}=<{}>", p.ty.name()))
                    .with_note(format!("declared at {}:{line}", self.sources[*fi].name))
                    .as_usage(),
                );
                failed.insert(name.clone());
            }
        }
        params.retain(|name, _| !failed.contains(name));
        let lookup = |n: &str| params.get(n).map(|p| p.value.clone());
        for (name, (fi, d)) in &decls {
            let Some(c) = &d.constraint else { continue };
            if failed.contains(name) || mentions(c, &|n| failed.contains(n)) {
                continue;
            }
            let src = &self.sources[*fi];
            match const_bool(src, &lookup, c, &format!("the constraint of `{name}`")) {
                Err(e) => errors.push(e),
                Ok(true) => {}
                Ok(false) => {
                    let msg = match &d.message {
                        Some(m) => eval_const_str(m, &lookup).unwrap_or_else(|e| e.message),
                        None => format!(
                            "constraint `{}` does not hold",
                            &src.text[c.span().0..c.span().1]
                        ),
                    };
                    let (line, _) = src.line_col(d.span.0);
                    let msg = format!("parameter {name} = {}: {msg}", params[name].value.display());
                    // The value breaking the constraint is the mistake: a `--set` value is bad
                    // usage; an import's `with` value or the default is a rule file's, shown
                    // where it is written.
                    let at = if from_command_line.contains(name.as_str()) {
                        None
                    } else if let Some((_, (vf, vspan))) = imported.get(name) {
                        Some((*vf, vspan.0))
                    } else {
                        d.default.as_ref().map(|e| (*fi, e.span().0))
                    };
                    let diag = match at {
                        Some((vf, off)) => Diagnostic::at(&self.sources[vf], off, msg),
                        None => Diagnostic::error(msg).as_usage(),
                    };
                    errors.push(diag.with_note(format!(
                        "constraint `{}` declared at {}:{line}",
                        &src.text[c.span().0..c.span().1],
                        src.name
                    )));
                }
            }
        }
        self.errors.extend(errors);
        (params, failed)
    }

    /// Every error of a load, in the order an author reads them: those about the invocation
    /// (a file named on the command line, `--set`) first, then each file's in source order,
    /// files in the order they were loaded. Two errors at one place are one mistake met by two
    /// checks: the first is kept. `None` when there is none.
    fn in_order(&self, errors: Vec<Diagnostic>) -> Option<Diagnostic> {
        let mut errors: Vec<Diagnostic> = errors
            .into_iter()
            .flat_map(|mut d| {
                let more = std::mem::take(&mut d.more);
                std::iter::once(d).chain(more.into_vec())
            })
            .collect();
        errors.sort_by_key(|d| {
            d.location.as_ref().map(|l| {
                let file = self.read.iter().position(|s| *s == l.file);
                (file.unwrap_or(usize::MAX), l.line, l.col)
            })
        });
        errors.dedup_by(|b, a| a.location.is_some() && a.location == b.location);
        Diagnostic::list(errors)
    }
}

/// A parameter value an import gives, and where (file index, span of the name).
type ImportedValue = (Val, (usize, Span));

impl Loader {
    /// The parameter values imports give (`import "x.rw" with {avg: false};`): each names a
    /// parameter the imported file declares and is a constant of its type, naming no
    /// parameter; two imports giving one parameter different values are refused. Every error is
    /// pushed to `errors`; a parameter given a faulty value joins `failed`.
    fn import_values(
        &self,
        params: &IndexMap<String, Param>,
        failed: &mut HashSet<String>,
        errors: &mut Vec<Diagnostic>,
    ) -> IndexMap<String, ImportedValue> {
        let mut out: IndexMap<String, ImportedValue> = IndexMap::new();
        for (fi, file) in self.files.iter().enumerate() {
            let src = &self.sources[fi];
            let mut k = 0;
            for item in &file.items {
                let Item::Import(im) = item else { continue };
                let target = self.imports[fi][k];
                k += 1;
                // An import that failed has its own error.
                let Some(target) = target else { continue };
                for (key, e) in &im.sets {
                    let declares = self.files[target]
                        .items
                        .iter()
                        .any(|it| matches!(it, Item::Param(p) if p.name.name == key.name));
                    if !declares {
                        let names = self.files[target].items.iter().filter_map(|it| match it {
                            Item::Param(p) => Some(p.name.name.as_str()),
                            _ => None,
                        });
                        let mut d = Diagnostic::at(
                            src,
                            key.span.0,
                            format!(
                                "`{}` declares no parameter `{}`",
                                self.sources[target].name, key.name
                            ),
                        );
                        if let Some(h) = did_you_mean(&closest(&key.name, names, 2)) {
                            d = d.with_hint(h);
                        }
                        errors.push(d);
                        // The file's required parameters this import leaves unset are what the
                        // misspelled key meant to set: this error says so, not a missing `--set`.
                        for it in &self.files[target].items {
                            if let Item::Param(p) = it {
                                let given = im.sets.iter().any(|(k, _)| k.name == p.name.name);
                                if p.default.is_none() && !given {
                                    failed.insert(p.name.name.clone());
                                }
                            }
                        }
                        continue;
                    }
                    // A parameter whose declaration is faulty, or a value that names one.
                    let Some(p) = params.get(&key.name) else {
                        continue;
                    };
                    if mentions(e, &|n| failed.contains(n)) {
                        failed.insert(key.name.clone());
                        continue;
                    }
                    // Values are given before `--set` gives the importing file's parameters
                    // theirs: a parameter named here would be read at its default, whatever
                    // the command line says.
                    if let Some(i) = bare_name(e, &|n| params.contains_key(n)) {
                        errors.push(
                            Diagnostic::at(
                                src,
                                i.span.0,
                                format!(
                                    "the value of `{}` names the parameter `{}`: a `with` value is a constant",
                                    key.name, i.name
                                ),
                            )
                            .with_hint(format!(
                                "give `{}` its value with --set {}=..., which every file sees",
                                key.name, key.name
                            )),
                        );
                        failed.insert(key.name.clone());
                        continue;
                    }
                    let v = eval_const(e, &|_| None)
                        .map_err(|er| Diagnostic::at(src, er.span.0, er.message))
                        .and_then(|v| {
                            p.ty.coerce(v).map_err(|v| {
                                Diagnostic::at(
                                    src,
                                    e.span().0,
                                    format!(
                                        "`{}` is {}, but the parameter is {}",
                                        key.name,
                                        v.a_kind(),
                                        p.ty.name()
                                    ),
                                )
                            })
                        });
                    let v = match v {
                        Ok(v) => v,
                        Err(d) => {
                            errors.push(d);
                            failed.insert(key.name.clone());
                            continue;
                        }
                    };
                    if let Some((prev, (pf, ps))) = out.get(&key.name) {
                        if *prev != v {
                            let (line, _) = self.sources[*pf].line_col(ps.0);
                            errors.push(
                                Diagnostic::at(
                                    src,
                                    key.span.0,
                                    format!(
                                        "parameter `{}` is given {} here and {} by another import",
                                        key.name,
                                        v.display(),
                                        prev.display()
                                    ),
                                )
                                .with_note(format!(
                                    "the other at {}:{line}",
                                    self.sources[*pf].name
                                )),
                            );
                            continue;
                        }
                    }
                    out.insert(key.name.clone(), (v, (fi, e.span())));
                }
            }
        }
        out
    }
}

/// Gives the k-th phase of one name, from the second on, the name `NAME#k`: a file applied
/// twice (or two files with a phase of one name) must not show two phases as one in `--stats`,
/// `--trace` and messages. Phase names are identifiers, so `#` makes no name a file could write.
fn name_repeated_phases(phases: &mut [Phase]) {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for ph in phases {
        let n = seen.entry(ph.name.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            ph.name = format!("{}#{n}", ph.name);
        }
    }
}

/// Evaluates a constant boolean expression (an import condition, a parameter constraint);
/// `what` names it in the error when the value is not a bool.
fn const_bool(
    src: &SourceFile,
    params: &dyn Fn(&str) -> Option<Val>,
    c: &Expr,
    what: &str,
) -> Result<bool, Diagnostic> {
    match eval_const(c, params) {
        Ok(Val::Bool(b)) => Ok(b),
        Ok(v) => Err(Diagnostic::at(
            src,
            c.span().0,
            format!("{what} must be a bool, found {}", v.a_kind()),
        )),
        Err(e) => Err(Diagnostic::at(src, e.span.0, e.message)),
    }
}

/// Whether two defaults are the same constant: their values when both evaluate (`2.0` and
/// `2.00` are one default), else their syntax with positions left out.
fn same_constant(a: &Expr, b: &Expr) -> bool {
    match (eval_const(a, &|_| None), eval_const(b, &|_| None)) {
        (Ok(x), Ok(y)) => x == y,
        _ => strip_spans(a) == strip_spans(b),
    }
}

/// Compares two expressions ignoring where they are written.
fn strip_spans(e: &Expr) -> String {
    let s = format!("{e:?}");
    // Spans print as `(a, b)`; drop digits inside them is overkill: compare the debug form with
    // every number-pair span removed.
    let mut out = String::with_capacity(s.len());
    let mut rest = s.as_str();
    while let Some(i) = rest.find("span: (") {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let end = rest.find(')').map_or(rest.len(), |j| j + 1);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The offset at which each line of `src` starts: a rule's line number is then a binary search
/// (`line_col` scans from the start of the file, quadratic over a file of many rules).
pub(super) fn line_starts(src: &SourceFile) -> Vec<usize> {
    std::iter::once(0)
        .chain(src.text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}
