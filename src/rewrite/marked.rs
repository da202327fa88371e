//! Ops found by a marker: the candidates of a pattern the match plan reaches through one of its
//! literal attribute tests ([`Reach::Marked`](crate::rules::compiled::Reach::Marked)), such as
//! the end of a running sum that an earlier application tagged `{global_norm_end: true}`.
//!
//! Why an index: such a pattern shares no value with what is bound, so without one it would be
//! tried against every op of the program for every partial match. A fold over k ops (a sum of
//! every optimizer's gradient norm) written with a marker would then cost O(k · n). Rules put
//! their markers on few ops (often one, moved along as the fold grows), so the index holds the
//! few ops that carry the value and is kept up to date as rules edit the program, instead of
//! being rebuilt by a scan.
//!
//! How it stays current without the engine telling it: op ids only grow, so ops created since
//! the last lookup are the ids past the last one looked at; an existing op changes its
//! attributes only through [`Program::set_op_attrs`](crate::ir::Program::set_op_attrs), which
//! logs it once an index asked for the log. Erased ops are dropped when met. The engine clears
//! the index at each phase, since an e-graph saturation rebuilds the program with new ids.

use super::matcher::attr_equals;
use crate::ir::{Module, OpId};
use crate::rules::Val;
use std::collections::BTreeSet;

/// The index of one run: an entry per attribute key and literal value some plan reached a
/// pattern by, made at its first lookup.
#[derive(Debug, Default)]
pub struct MarkedIndex {
    /// The attribute key, the literal, and the ops carrying it (a rule set has a few markers:
    /// found by a scan, with no key to allocate per lookup).
    entries: Vec<(String, Val, Entry)>,
}

#[derive(Debug, Default)]
struct Entry {
    /// Op ids below this were looked at.
    scanned: usize,
    /// Entries of the program's change log looked at.
    logged: usize,
    /// By dictionary id: 0 not asked yet, 1 carries the value, 2 does not (dictionaries are
    /// interned and never change, and ops share them).
    dicts: Vec<u8>,
    /// The ops found carrying the value, in id order.
    ops: BTreeSet<OpId>,
}

impl MarkedIndex {
    /// Forgets every entry: the program may have been rebuilt with new op ids.
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Appends to `out` the live ops of `m`'s main program whose attribute `key` equals `want`
    /// as a pattern's `{key: want}` compares it, in id order.
    pub fn ops(&mut self, m: &mut Module, key: &str, want: &Val, out: &mut Vec<OpId>) {
        m.main.log_attr_changes();
        let k = match self
            .entries
            .iter()
            .position(|(k, v, _)| k == key && v == want)
        {
            Some(k) => k,
            None => {
                self.entries
                    .push((key.to_string(), want.clone(), Entry::default()));
                self.entries.len() - 1
            }
        };
        let e = &mut self.entries[k].2;
        let carries = |e: &mut Entry, op: OpId| {
            let id = m.main.op_attrs(op).0 as usize;
            if id >= e.dicts.len() {
                e.dicts.resize(id + 1, 0);
            }
            if e.dicts[id] == 0 {
                let yes = m
                    .ctx
                    .attrs(m.main.op_attrs(op))
                    .get(key)
                    .is_some_and(|a| attr_equals(a, want));
                e.dicts[id] = if yes { 1 } else { 2 };
            }
            e.dicts[id] == 1
        };
        let p = &m.main;
        for i in e.scanned..p.op_capacity() {
            let op = OpId(i as u32);
            if p.is_live(op) && carries(e, op) {
                e.ops.insert(op);
            }
        }
        e.scanned = p.op_capacity();
        let log = p.attr_changes();
        for &op in &log[e.logged.min(log.len())..] {
            if carries(e, op) {
                e.ops.insert(op);
            } else {
                e.ops.remove(&op);
            }
        }
        e.logged = log.len();
        e.ops.retain(|&op| p.is_live(op));
        out.extend(e.ops.iter().copied());
    }
}
