//! `irw lint`: accesses to a buffer written in place that Paddle's multi-threaded executor may
//! run in either order.
//!
//! # Paddle's dependency rule, as modelled here
//!
//! Paddle 3.3.1's `PirDependencyBuilder::BuildDownstreamMap` orders instructions by **variable
//! ids only** (see `../shared/paddle-race/README.md` for the sources):
//!
//! - every PIR value is its own variable, except that values with a persistable name (a block
//!   keyword argument, a `builtin.parameter`, a persistable `pd_op.data`) are the scope variable
//!   of that name;
//! - an op reads the variables of its operands (a `builtin.combine` result stands for its
//!   operands) and writes the variables of its results **and** of each operand an in-place
//!   result aliases (the dialect table's aliasing): `%s = scale_(%m)` writes {S, M};
//! - a read depends on the variable's last writer (RAW); a write depends on the reads of the
//!   variable since its last write, or else on the last writer (WAR/WAW).
//!
//! Nothing relates two variables that share one allocation: `%s` and `%m` above are one buffer,
//! but a write to `%m` is not ordered after a read of `%s`. `builtin.*` ops are not instructions
//! in Paddle (they name or group variables) and add no edges; ops inside regions are not looked
//! at (a region op is one instruction reading its operands). Unknown ops read their operands and
//! write fresh results.
//!
//! # What is reported
//!
//! Values joined by in-place aliasing (and by a shared persistable name) form one **buffer**. Two
//! ops that access the same buffer, at least one of them writing it (an in-place write, or the
//! op that creates the buffer), must be ordered by the transitive closure of the edges above;
//! otherwise the executor may run them in either order and the reader sees the buffer before or
//! after the write: a read-after-write, write-after-read or write-after-write hazard.
//!
//! # Algorithm: linear in the accesses, plus local searches
//!
//! No all-pairs closure. Per buffer, walk its accesses in program order with the last write `W`
//! and the reads since `W`. It suffices to check, for each access `a`:
//!
//! - a read `r`: `W ⇝ r`;
//! - a write `w`: every read since `W` reaches `w` (or `W ⇝ w` when there is none).
//!
//! These are exactly the conflicting pairs of neighbours, and every other conflicting pair is
//! ordered through them by transitivity (a read before a later write reaches the first write
//! after it, and consecutive writes form a chain), so a pair is unordered iff one of these checks
//! fails: the check is exact, with one query per access.
//!
//! Each query `sources ⇝ target` is a depth-first search **backwards** from the target over the
//! dependency edges, which all point forward in program order, so the search never goes above the
//! earliest source, and it stops as soon as every source is found. It visits only ancestors of
//! the target that lie between the source and the target: in training programs that is the
//! target's own operands' producers (the optimizer and its constants for a zeroing), not the
//! stretch of program between them, so a 10^6-op program lints in linear time in practice. The
//! worst case (a long chain of dependent ops between every source and target) is
//! O(ops × accesses); `irw lint` prints how many ops the searches visited. One diagnostic is
//! reported per unordered neighbouring pair (other unordered pairs follow from it).
use crate::diag::{Diagnostic, SourceFile};
use crate::dialect::protocol::{scope_reader_name_attr, DATA_OP};
use crate::dialect::Dialect;
use crate::ir::{Attr, Module, OpId, ValueDef, ValueId};
use rustc_hash::FxHashMap;

/// How an op touches a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Read,
    Write,
}

/// One access to a buffer: the op (by program position) and the value it went through.
#[derive(Clone, Copy, Debug)]
struct Access {
    pos: u32,
    kind: Kind,
    via: ValueId,
}

/// One unordered pair.
#[derive(Debug, Clone)]
pub struct Hazard {
    /// The earlier op (in program order) and how it accesses the buffer.
    pub first: OpId,
    pub first_writes: bool,
    pub first_via: ValueId,
    /// The later op.
    pub second: OpId,
    pub second_writes: bool,
    pub second_via: ValueId,
    /// The buffer's name (a persistable name of the buffer, or the first value's print name).
    pub buffer: String,
}

impl Hazard {
    pub fn kind(&self) -> &'static str {
        match (self.first_writes, self.second_writes) {
            (true, true) => "write-after-write",
            (true, false) => "read-after-write",
            _ => "write-after-read",
        }
    }
}

/// What linting found.
#[derive(Debug, Default)]
pub struct Report {
    pub hazards: Vec<Hazard>,
    /// Instructions modelled (non-`builtin` ops, of every block).
    pub instructions: usize,
    /// Buffers accessed by more than one op with a write among them.
    pub buffers_checked: usize,
    /// Ops the reachability searches visited, in total.
    pub visited: u64,
}

struct Dsu(Vec<u32>);

impl Dsu {
    fn find(&mut self, mut x: u32) -> u32 {
        while self.0[x as usize] != x {
            let p = self.0[self.0[x as usize] as usize];
            self.0[x as usize] = p;
            x = p;
        }
        x
    }
    fn union(&mut self, a: u32, b: u32) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.0[a.max(b) as usize] = a.min(b);
        }
    }
}

/// The persistable name a value stands for, if any.
fn persistable_name(m: &Module, v: ValueId) -> Option<String> {
    let p = &m.main;
    match p.value_def(v) {
        ValueDef::Kwarg { block, index } => Some(
            m.ctx
                .str(p.block_kwargs(block)[index as usize].name)
                .to_string(),
        ),
        ValueDef::Result { op, .. } => {
            let name = m.ctx.str(p.op_name(op));
            let d = m.ctx.attrs(p.op_attrs(op));
            let key = scope_reader_name_attr(name)?;
            if name == DATA_OP && d.get("persistable").and_then(Attr::as_bool) != Some(true) {
                return None;
            }
            d.get(key).and_then(|a| a.as_str().map(|s| s.into_owned()))
        }
        ValueDef::Arg { .. } => None,
    }
}

/// Finds the hazards of the main program: its top block and each block inside a region
/// (`pd_op.if`, `pd_op.while`). Paddle's executor runs a region's block as a program of its
/// own, ordering its ops by the same variable rule, while the region op is one instruction of
/// the block that holds it; so each block is linted on its own, in program order.
pub fn lint(m: &Module) -> Report {
    let p = &m.main;
    let mut blocks = vec![p.top_block()];
    for op in p.walk() {
        for &r in p.regions(op) {
            blocks.extend_from_slice(p.region_blocks(r));
        }
    }
    let mut report = Report::default();
    for b in blocks {
        let r = lint_block(m, b);
        report.hazards.extend(r.hazards);
        report.instructions += r.instructions;
        report.buffers_checked += r.buffers_checked;
        report.visited += r.visited;
    }
    report
}

/// The hazards among the ops of one block.
fn lint_block(m: &Module, block: crate::ir::BlockId) -> Report {
    let p = &m.main;
    let dialect = Dialect::get();
    let nv = p.value_capacity();
    // Variable ids: one per value, values of one persistable name share the first one's.
    let mut var_of: Vec<u32> = (0..nv as u32).collect();
    let mut by_name: FxHashMap<String, u32> = FxHashMap::default();
    let mut name_of_var: FxHashMap<u32, String> = FxHashMap::default();
    let top = p.top_block();
    let mut named = |v: ValueId, var_of: &mut Vec<u32>| {
        if let Some(n) = persistable_name(m, v) {
            let id = *by_name.entry(n.clone()).or_insert(v.0);
            var_of[v.index()] = id;
            name_of_var.entry(id).or_insert(n);
        }
    };
    for k in p.block_kwargs(top) {
        named(k.value, &mut var_of);
    }
    let ops: Vec<OpId> = p.block_ops(block).collect();
    for &op in &ops {
        for r in p.results(op) {
            named(r, &mut var_of);
        }
    }
    // The variables an operand stands for (a combine's result: its operands, recursively).
    let operand_vars = |v: ValueId, out: &mut Vec<(u32, ValueId)>| {
        let mut stack = vec![v];
        while let Some(v) = stack.pop() {
            match p.defining_op(v) {
                Some(d) if m.ctx.str(p.op_name(d)) == "builtin.combine" => {
                    stack.extend(p.operands(d).flatten());
                }
                _ => out.push((var_of[v.index()], v)),
            }
        }
    };

    // Instructions in program order, with their reads and writes.
    let mut instr: Vec<OpId> = Vec::new();
    let mut reads: Vec<Vec<(u32, ValueId)>> = Vec::new();
    let mut writes: Vec<Vec<(u32, ValueId)>> = Vec::new();
    let mut dsu = Dsu((0..nv as u32).collect());
    for &op in &ops {
        let name = m.ctx.str(p.op_name(op));
        if name.starts_with("builtin.") {
            continue;
        }
        let mut r = Vec::new();
        for v in p.operands(op).flatten() {
            operand_vars(v, &mut r);
        }
        let mut w = Vec::new();
        let spec = dialect.spec(name);
        for (i, res) in p.results(op).enumerate() {
            w.push((var_of[res.index()], res));
            if let Some(o) = spec.and_then(|s| s.aliased_operand(i)) {
                if let Some(Some(ov)) = (o < p.num_operands(op)).then(|| p.operand(op, o)) {
                    w.push((var_of[ov.index()], ov));
                    dsu.union(var_of[res.index()], var_of[ov.index()]);
                }
            }
        }
        r.sort_by_key(|x| x.0);
        r.dedup_by_key(|x| x.0);
        w.sort_by_key(|x| x.0);
        w.dedup_by_key(|x| x.0);
        instr.push(op);
        reads.push(r);
        writes.push(w);
    }
    let n = instr.len();

    // Paddle's dependency edges, as predecessor lists.
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut last_write: FxHashMap<u32, u32> = FxHashMap::default();
    let mut since: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    for i in 0..n {
        let me = i as u32;
        for &(var, _) in &reads[i] {
            if let Some(&w) = last_write.get(&var) {
                preds[i].push(w);
            }
        }
        for &(var, _) in &writes[i] {
            match since.get(&var) {
                Some(rs) if !rs.is_empty() => preds[i].extend(rs.iter().filter(|&&r| r != me)),
                _ => {
                    if let Some(&w) = last_write.get(&var) {
                        preds[i].push(w);
                    }
                }
            }
        }
        for &(var, _) in &reads[i] {
            if writes[i].binary_search_by_key(&var, |x| x.0).is_err() {
                since.entry(var).or_default().push(me);
            }
        }
        for &(var, _) in &writes[i] {
            since.insert(var, Vec::new());
            last_write.insert(var, me);
        }
        preds[i].sort_unstable();
        preds[i].dedup();
    }

    // Accesses per buffer, in program order.
    let mut per_buffer: FxHashMap<u32, Vec<Access>> = FxHashMap::default();
    for i in 0..n {
        let mut mine: Vec<(u32, Kind, ValueId)> = Vec::new();
        for &(var, v) in &writes[i] {
            mine.push((dsu.find(var), Kind::Write, v));
        }
        for &(var, v) in &reads[i] {
            let b = dsu.find(var);
            if !mine.iter().any(|x| x.0 == b) {
                mine.push((b, Kind::Read, v));
            }
        }
        // A write through an in-place operand names the operand (the alias being written).
        for (b, kind, via) in mine {
            let list = per_buffer.entry(b).or_default();
            match list.last_mut() {
                Some(a) if a.pos == i as u32 => {
                    if kind == Kind::Write {
                        a.kind = Kind::Write;
                    }
                }
                _ => list.push(Access {
                    pos: i as u32,
                    kind,
                    via,
                }),
            }
        }
    }
    // The buffer's persistable name, if one of its variables has one.
    let mut buffer_name: FxHashMap<u32, String> = FxHashMap::default();
    let mut vars: Vec<&u32> = name_of_var.keys().collect();
    vars.sort();
    for &var in vars {
        buffer_name
            .entry(dsu.find(var))
            .or_insert_with(|| name_of_var[&var].clone());
    }

    let mut report = Report {
        instructions: n,
        ..Report::default()
    };
    let mut search = Search {
        preds: &preds,
        stamp: vec![0; n],
        epoch: 0,
        visited: 0,
    };
    let mut buffers: Vec<(&u32, &Vec<Access>)> = per_buffer.iter().collect();
    buffers.sort_by_key(|(_, l)| l.first().map(|a| a.pos));
    let names = PrintNames::new(m);
    for (&b, list) in buffers {
        if list.len() < 2 || !list.iter().any(|a| a.kind == Kind::Write) {
            continue;
        }
        report.buffers_checked += 1;
        let mut last_w: Option<Access> = None;
        let mut reads_since: Vec<Access> = Vec::new();
        for &a in list {
            let sources: Vec<Access> = match a.kind {
                Kind::Read => last_w.into_iter().collect(),
                Kind::Write if !reads_since.is_empty() => std::mem::take(&mut reads_since),
                Kind::Write => last_w.into_iter().collect(),
            };
            if !sources.is_empty() {
                let found = search.reaches(&sources, a.pos);
                for (s, ok) in sources.iter().zip(found) {
                    if !ok {
                        report.hazards.push(Hazard {
                            first: instr[s.pos as usize],
                            first_writes: s.kind == Kind::Write,
                            first_via: s.via,
                            second: instr[a.pos as usize],
                            second_writes: a.kind == Kind::Write,
                            second_via: a.via,
                            buffer: buffer_name
                                .get(&b)
                                .cloned()
                                .unwrap_or_else(|| format!("of {}", names.name(m, s.via))),
                        });
                    }
                }
            }
            match a.kind {
                Kind::Read => reads_since.push(a),
                Kind::Write => last_w = Some(a),
            }
        }
    }
    report.visited = search.visited;
    report
}

/// Backward reachability over the dependency edges (which point forward in program order).
struct Search<'a> {
    preds: &'a [Vec<u32>],
    stamp: Vec<u32>,
    epoch: u32,
    visited: u64,
}

impl Search<'_> {
    /// Which of `sources` (all before `target`) the target depends on, transitively.
    fn reaches(&mut self, sources: &[Access], target: u32) -> Vec<bool> {
        let mut found = vec![false; sources.len()];
        // Direct edges first: the common case.
        let direct = &self.preds[target as usize];
        let mut left = 0;
        for (s, f) in sources.iter().zip(found.iter_mut()) {
            *f = direct.binary_search(&s.pos).is_ok();
            left += usize::from(!*f);
        }
        if left == 0 {
            return found;
        }
        let floor = sources.iter().map(|s| s.pos).min().unwrap_or(0);
        self.epoch += 1;
        let mut stack = vec![target];
        self.stamp[target as usize] = self.epoch;
        while let Some(x) = stack.pop() {
            self.visited += 1;
            for &q in &self.preds[x as usize] {
                if q < floor || self.stamp[q as usize] == self.epoch {
                    continue;
                }
                self.stamp[q as usize] = self.epoch;
                if let Some(i) = sources.iter().position(|s| s.pos == q) {
                    if !found[i] {
                        found[i] = true;
                        left -= 1;
                        if left == 0 {
                            return found;
                        }
                    }
                }
                stack.push(q);
            }
        }
        found
    }
}

/// The `%N` names the printer gives values (results numbered in print order).
struct PrintNames(Vec<u32>);

impl PrintNames {
    fn new(m: &Module) -> Self {
        let p = &m.main;
        let mut names = vec![u32::MAX; p.value_capacity()];
        let mut next = 0;
        for op in p.walk() {
            for r in p.results(op) {
                names[r.index()] = next;
                next += 1;
            }
        }
        PrintNames(names)
    }

    fn name(&self, m: &Module, v: ValueId) -> String {
        match m.main.value_def(v) {
            ValueDef::Kwarg { block, index } => format!(
                "%kwarg_{}",
                m.ctx.str(m.main.block_kwargs(block)[index as usize].name)
            ),
            ValueDef::Arg { .. } => "a block argument".to_string(),
            ValueDef::Result { .. } => match self.0.get(v.index()) {
                Some(&n) if n != u32::MAX => format!("%{n}"),
                _ => "a value".to_string(),
            },
        }
    }
}

/// One diagnostic per hazard, at the later op, naming both ops and the values they go through.
pub fn diagnostics(m: &Module, src: &SourceFile, report: &Report) -> Vec<Diagnostic> {
    let names = PrintNames::new(m);
    let p = &m.main;
    let op_name = |o: OpId| m.ctx.str(p.op_name(o)).to_string();
    let at = |o: OpId| match p.position(o) {
        Some(off) => {
            let (l, c) = src.line_col(off);
            format!("{}:{l}:{c}", src.name)
        }
        None => format!("main op #{}", o.0),
    };
    let verb = |w: bool| if w { "writes" } else { "reads" };
    report
        .hazards
        .iter()
        .map(|h| {
            let msg = format!(
                "{} hazard on buffer `{}`: `{}` {} it through {} and is not ordered after `{}` ({}), which {} it through {}",
                h.kind(),
                h.buffer,
                op_name(h.second),
                verb(h.second_writes),
                names.name(m, h.second_via),
                op_name(h.first),
                at(h.first),
                verb(h.first_writes),
                names.name(m, h.first_via),
            );
            let d = match p.position(h.second) {
                Some(off) => Diagnostic::at(src, off, msg),
                None => Diagnostic::in_file(&src.name, msg),
            };
            d.with_note(
                "Paddle's executor orders ops by variable only: an in-place result is a separate variable sharing its input's buffer, so a write is ordered after the reads of the same value only",
            )
            .with_hint(if h.second_writes && !h.first_writes {
                format!("write through the value `{}` read ({})", op_name(h.first), names.name(m, h.first_via))
            } else {
                "access the buffer through the last value written to it".to_string()
            })
        })
        .collect()
}
