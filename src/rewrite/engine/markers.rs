//! Insertion points: where the next built op goes ([`Cursor`]) and the per-stage markers behind
//! `at end of optimize` / `at start of backward`. The markers are found once per phase and kept
//! up to date as ops are built, moved and erased, so finding an insertion point never rescans the
//! block (the no-quadratic-pass invariant).

use super::*;

/// Where the next built op goes.
#[derive(Debug, Clone, Copy)]
pub(super) enum Cursor {
    After(OpId),
    Before(OpId),
    BlockStart(BlockId),
    BlockEnd(BlockId),
}

impl<'a> Engine<'a> {
    /// Finds the start and the last op of each stage (at most once per phase: one pass over
    /// the block).
    ///
    /// A stage starts where it first reads something: at its first op with an operand, or at
    /// the first of the ops of the stage right before that one (the constants it reads). An op
    /// that reads nothing (a `pd_op.data` of an optimizer's state marked optimize, above the
    /// forward) can sit anywhere, so it does not start the stage: `at start of optimize` stays
    /// after the backward. In a program whose stages follow each other, that is the stage's
    /// first op. A stage none of whose ops reads anything starts at its first op.
    pub(super) fn find_markers(&mut self) {
        self.stage_first.clear();
        self.stage_last.clear();
        let top = self.m.main.top_block();
        let mut reading: FxHashMap<i64, OpId> = FxHashMap::default();
        let mut cur = self.m.main.first_op(top);
        while let Some(op) = cur {
            if let Some(r) = self.cache.role(self.m, op) {
                self.stage_first.entry(r).or_insert(op);
                if self.m.main.num_operands(op) > 0 {
                    reading.entry(r).or_insert(op);
                }
                self.stage_last.insert(r, op);
            }
            cur = self.m.main.next_op(op);
        }
        for (r, op) in reading {
            let first = self.stage_first.get(&r).copied();
            if let Some(start) = self.start_of(r, Some(op), first) {
                self.stage_first.insert(r, start);
            }
        }
    }

    /// Where stage `st` starts (the rule is [`Engine::find_markers`]'s), given its first op
    /// that reads an operand and its first op.
    fn start_of(
        &mut self,
        st: i64,
        first_reading: Option<OpId>,
        first: Option<OpId>,
    ) -> Option<OpId> {
        let Some(mut op) = first_reading else {
            return first;
        };
        while let Some(p) = self.m.main.prev_op(op) {
            if self.role(p) != Some(st) {
                break;
            }
            op = p;
        }
        Some(op)
    }

    /// The start of stage `st` ([`Engine::find_markers`]), found by a scan of the block that
    /// stops at the stage's first op reading an operand.
    fn stage_start(&mut self, st: i64) -> Option<OpId> {
        let mut first = None;
        let mut cur = self.m.main.first_op(self.m.main.top_block());
        while let Some(o) = cur {
            if self.role(o) == Some(st) {
                first = first.or(Some(o));
                if self.m.main.num_operands(o) > 0 {
                    return self.start_of(st, Some(o), first);
                }
            }
            cur = self.m.main.next_op(o);
        }
        self.start_of(st, None, first)
    }

    /// A marker that is moved, erased or re-roled is looked up again when next needed.
    pub(super) fn forget_marker(&mut self, op: OpId) {
        self.stage_first.retain(|_, o| *o != op);
        self.stage_last.retain(|_, o| *o != op);
    }

    pub(super) fn marker_ok(&mut self, op: OpId, stage: i64) -> bool {
        let p = &self.m.main;
        p.is_live(op)
            && p.op_block(op) == Some(p.top_block())
            && self.cache.role(self.m, op) == Some(stage)
    }

    pub(super) fn cursor(
        &mut self,
        lr: &'a CompiledRule,
        b: &mut Bindings,
        at: &InsertPoint,
    ) -> Result<Cursor, Diagnostic> {
        let top = self.m.main.top_block();
        Ok(match at {
            InsertPoint::After(e) => match self.eval(lr, b, e)? {
                Val::Op(o) => Cursor::After(self.anchor(lr, e.span(), o)?),
                Val::Value(v) => match self.m.main.value_def(v) {
                    ValueDef::Result { op, .. } => Cursor::After(self.anchor(lr, e.span(), op)?),
                    ValueDef::Arg { block, .. } | ValueDef::Kwarg { block, .. } => {
                        Cursor::BlockStart(block)
                    }
                },
                v => {
                    return Err(self.err(
                        lr,
                        e.span(),
                        format!("`after` needs a value or an op, found {}", v.a_kind()),
                    ))
                }
            },
            InsertPoint::Before(e) => match self.eval(lr, b, e)? {
                Val::Op(o) => Cursor::Before(self.anchor(lr, e.span(), o)?),
                Val::Value(v) => match self.m.main.defining_op(v) {
                    Some(o) => Cursor::Before(self.anchor(lr, e.span(), o)?),
                    None => Cursor::BlockStart(top),
                },
                v => {
                    return Err(self.err(
                        lr,
                        e.span(),
                        format!("`before` needs an op, found {}", v.a_kind()),
                    ))
                }
            },
            InsertPoint::StageEnd(s) => {
                let st = *s;
                let mut mk = self.stage_last.get(&st).copied();
                if mk.is_none_or(|o| !self.marker_ok(o, st)) {
                    // Rare: the marker moved away. Find the last op of the stage again.
                    mk = None;
                    let mut cur = self.m.main.last_op(top);
                    while let Some(o) = cur {
                        if self.role(o) == Some(st) {
                            mk = Some(o);
                            break;
                        }
                        cur = self.m.main.prev_op(o);
                    }
                }
                match mk {
                    Some(o) => {
                        self.stage_last.insert(st, o);
                        Cursor::After(o)
                    }
                    None => Cursor::BlockEnd(top),
                }
            }
            InsertPoint::RegionEnd { op, index, span } => {
                let o = match self.eval(lr, b, op)? {
                    Val::Op(o) => o,
                    v => {
                        return Err(self.err(
                            lr,
                            op.span(),
                            format!("`region {index} of` needs an op, found {}", v.a_kind()),
                        ))
                    }
                };
                let regions = self.m.main.regions(o);
                match regions.get(*index as usize) {
                    Some(&r) => match self.m.main.region_blocks(r).first() {
                        Some(&bk) => Cursor::BlockEnd(bk),
                        None => return Err(self.err(lr, *span, "this region has no block")),
                    },
                    None => {
                        let name = self.m.ctx.str(self.m.main.op_name(o)).to_string();
                        return Err(self.err(
                            lr,
                            *span,
                            format!(
                                "`{name}` has {} region(s): no region {index}",
                                regions.len()
                            ),
                        ));
                    }
                }
            }
            InsertPoint::StageStart(s) => {
                let st = *s;
                let mut mk = self.stage_first.get(&st).copied();
                if mk.is_none_or(|o| !self.marker_ok(o, st)) {
                    mk = self.stage_start(st);
                }
                match mk {
                    Some(o) => {
                        self.stage_first.insert(st, o);
                        Cursor::Before(o)
                    }
                    None => Cursor::BlockEnd(top),
                }
            }
        })
    }

    /// The op an insertion point `after`/`before` names, which must be in a block: one this
    /// rule erased (in an `if` branch, which the loader's check does not follow past the
    /// `if`) has no place next to it.
    fn anchor(&self, lr: &'a CompiledRule, span: Span, o: OpId) -> Result<OpId, Diagnostic> {
        if self.m.main.op_block(o).is_some() {
            return Ok(o);
        }
        Err(self
            .err(
                lr,
                span,
                "this op was erased by this rule: nothing can be placed next to it",
            )
            .with_hint("an action next to an op must come before its `erase`"))
    }

    /// Whether the place `cur` names lies inside a region of `op` (at any depth): moving `op`
    /// there would make it hold itself, and take it and all it holds out of the program.
    pub(super) fn inside(&self, cur: Cursor, op: OpId) -> bool {
        let p = &self.m.main;
        let mut block = match cur {
            Cursor::After(a) | Cursor::Before(a) => p.op_block(a),
            Cursor::BlockStart(b) | Cursor::BlockEnd(b) => Some(b),
        };
        while let Some(holder) = block.and_then(|b| p.block_parent_op(b)) {
            if holder == op {
                return true;
            }
            block = p.op_block(holder);
        }
        false
    }

    pub(super) fn place(&mut self, cur: &mut Cursor, op: OpId) {
        let p = &mut self.m.main;
        match *cur {
            Cursor::After(a) => {
                p.insert_after(a, op);
                *cur = Cursor::After(op);
            }
            Cursor::Before(a) => p.insert_before(a, op),
            Cursor::BlockStart(bk) => {
                p.prepend(bk, op);
                *cur = Cursor::After(op);
            }
            Cursor::BlockEnd(bk) => p.append(bk, op),
        }
    }
}
