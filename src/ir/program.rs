//! The program arena: ops, values, blocks and regions of one PIR program, addressed by small
//! copyable ids.
//!
//! Why an arena with intrusive lists:
//! - ops in a block form a doubly linked list, so inserting, erasing and moving an op is O(1)
//!   and never shifts a `Vec` (a pass over a 10^6-op program must stay linear);
//! - every operand slot is a node in its value's doubly linked *use list*, so "replace all uses"
//!   costs O(uses) and changing one operand is O(1);
//! - results and operands of an op are contiguous ranges of two flat vectors, so an op costs no
//!   heap allocation of its own.
//!
//! Erased ops stay in the arena (marked dead) so ids never dangle; the printer and iterators
//! skip them.
//!
//! Architecture invariant: nothing here knows about text or about any particular op; the
//! dialect lives above the IR, the syntax in `parse/`/`print.rs`.

use super::attr::AttrId;
use super::intern::Sym;
use super::types::TypeId;

const NONE: u32 = u32::MAX;

macro_rules! id_type {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);
        impl $name {
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id_type!(
    /// An operation.
    OpId
);
id_type!(
    /// An SSA value: an op result, a positional block argument or a keyword argument.
    ValueId
);
id_type!(
    /// A block: an ordered list of ops with arguments.
    BlockId
);
id_type!(
    /// A region of a region-holding op (`pd_op.if` has two, `pd_op.while` one).
    RegionId
);

fn opt(x: u32) -> Option<u32> {
    (x != NONE).then_some(x)
}

/// How an op is written. Plain ops are `(...) = "name" (...) {attrs} : (types) -> types`;
/// the other two forms are the region ops Paddle prints specially.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum OpSyntax {
    Plain,
    /// `(...) = "pd_op.if" (%c) {attrs} -> types {` region `} else {` region `}`.
    Regions,
    /// `(...) = "pd_op.while" (cond=%c, inputs=%a, %b) { ` `^%arg_0 ...` region `}`.
    While,
}

/// Where a value comes from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ValueDef {
    Result { op: OpId, index: u32 },
    Arg { block: BlockId, index: u32 },
    Kwarg { block: BlockId, index: u32 },
}

/// One use of a value: operand `index` of `op`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Use {
    pub op: OpId,
    pub index: u32,
}

#[derive(Clone, Debug)]
pub struct OpData {
    pub name: Sym,
    pub attrs: AttrId,
    operands_start: u32,
    operands_len: u32,
    results_start: u32,
    /// The number of results in the low 28 bits, the syntax in the next two, whether the op
    /// was erased in the next: a 40-byte op record instead of 44 (ops are the IR's most
    /// numerous record).
    results_flags: u32,
    /// Index into `Program::op_regions`, or `NONE`: few ops have regions, and a vector in
    /// every op would cost 24 bytes an op.
    regions: u32,
    parent: u32,
    prev: u32,
    next: u32,
}

const RESULTS_BITS: u32 = 28;
const RESULTS_MASK: u32 = (1 << RESULTS_BITS) - 1;
/// The most results an op can have (2^28 - 1: a line of over a gigabyte).
pub const MAX_RESULTS: u32 = RESULTS_MASK;
const DEAD_BIT: u32 = 1 << 30;

impl OpData {
    /// How the op is printed.
    pub fn syntax(&self) -> OpSyntax {
        match (self.results_flags >> RESULTS_BITS) & 3 {
            0 => OpSyntax::Plain,
            1 => OpSyntax::Regions,
            _ => OpSyntax::While,
        }
    }

    fn results_len(&self) -> u32 {
        self.results_flags & RESULTS_MASK
    }

    fn dead(&self) -> bool {
        self.results_flags & DEAD_BIT != 0
    }
}

#[derive(Clone, Debug)]
struct OperandSlot {
    value: u32,
    user: u32,
    prev_use: u32,
    next_use: u32,
}

#[derive(Clone, Debug)]
struct ValueData {
    ty: TypeId,
    def: PackedDef,
    first_use: u32,
}

/// A [`ValueDef`] in 8 bytes rather than 12 (values are the IR's second most numerous
/// record): the owning op or block, and the index with the kind in its top two bits.
#[derive(Copy, Clone, Debug)]
struct PackedDef {
    owner: u32,
    kind_index: u32,
}

impl PackedDef {
    const INDEX_BITS: u32 = 30;
    const INDEX_MASK: u32 = (1 << Self::INDEX_BITS) - 1;

    fn pack(def: ValueDef) -> PackedDef {
        let (kind, owner, index) = match def {
            ValueDef::Result { op, index } => (0, op.0, index),
            ValueDef::Arg { block, index } => (1, block.0, index),
            ValueDef::Kwarg { block, index } => (2, block.0, index),
        };
        assert!(
            index <= Self::INDEX_MASK,
            "fewer than 2^30 results or arguments"
        );
        PackedDef {
            owner,
            kind_index: kind << Self::INDEX_BITS | index,
        }
    }

    fn unpack(self) -> ValueDef {
        let index = self.kind_index & Self::INDEX_MASK;
        match self.kind_index >> Self::INDEX_BITS {
            0 => ValueDef::Result {
                op: OpId(self.owner),
                index,
            },
            1 => ValueDef::Arg {
                block: BlockId(self.owner),
                index,
            },
            _ => ValueDef::Kwarg {
                block: BlockId(self.owner),
                index,
            },
        }
    }
}

/// A positional block argument (`^%arg_0 {attrs}`).
#[derive(Clone, Debug)]
pub struct BlockArg {
    pub value: ValueId,
    pub attrs: AttrId,
}

/// A keyword argument (`%kwarg_<name> {attrs}`): a persistable the program reads by name.
#[derive(Clone, Debug)]
pub struct Kwarg {
    pub name: Sym,
    pub value: ValueId,
    pub attrs: AttrId,
}

#[derive(Clone, Debug)]
struct BlockData {
    args: Vec<BlockArg>,
    kwargs: Vec<Kwarg>,
    first: u32,
    last: u32,
    parent_region: u32,
    len: u32,
}

#[derive(Clone, Debug)]
struct RegionData {
    blocks: Vec<BlockId>,
    parent_op: u32,
}

/// One program (main or startup): a top-level block and everything nested in it.
#[derive(Clone, Debug)]
pub struct Program {
    ops: Vec<OpData>,
    operands: Vec<OperandSlot>,
    values: Vec<ValueData>,
    blocks: Vec<BlockData>,
    regions: Vec<RegionData>,
    /// The regions of each op that has any (`OpData::regions` indexes this).
    op_regions: Vec<Vec<RegionId>>,
    top: BlockId,
    live_ops: usize,
    /// How many times an op was placed in or taken out of a block: equal counts of one program
    /// mean the same ops in the same order ([`Program::layout_edits`]).
    layout_edits: u64,
    /// Byte offset in the source file of each parsed op (`u32::MAX` for ops a rewrite made);
    /// only for pointing diagnostics at the input.
    positions: Vec<u32>,
    /// Once an index of ops by attribute follows this program ([`Program::log_attr_changes`]):
    /// every op [`Program::set_op_attrs`] gave a new dictionary, in order. Ops created later
    /// need no entry: the op arena only grows, so an index finds them by their ids.
    attr_changes: Option<Vec<OpId>>,
}

impl Default for Program {
    fn default() -> Self {
        Self::new()
    }
}

impl Program {
    /// An empty program with one empty top-level block.
    pub fn new() -> Self {
        let mut p = Program {
            ops: Vec::new(),
            operands: Vec::new(),
            values: Vec::new(),
            blocks: Vec::new(),
            regions: Vec::new(),
            op_regions: Vec::new(),
            top: BlockId(0),
            live_ops: 0,
            layout_edits: 0,
            positions: Vec::new(),
            attr_changes: None,
        };
        p.top = p.new_block(NONE);
        p
    }

    /// Reserves room for about `n` ops and their source positions (readers know the op count
    /// up front: the text parser its lines, the JSON reader its scan).
    pub fn reserve(&mut self, n: usize) {
        self.ops.reserve(n);
        self.operands.reserve(2 * n);
        self.values.reserve(n + n / 2);
        self.positions.reserve(n);
    }

    fn new_block(&mut self, parent_region: u32) -> BlockId {
        let id = BlockId(self.blocks.len() as u32);
        self.blocks.push(BlockData {
            args: Vec::new(),
            kwargs: Vec::new(),
            first: NONE,
            last: NONE,
            parent_region,
            len: 0,
        });
        id
    }

    // ---- queries -------------------------------------------------------------------------

    /// The top-level block.
    pub fn top_block(&self) -> BlockId {
        self.top
    }

    /// Number of live ops (all blocks).
    pub fn num_ops(&self) -> usize {
        self.live_ops
    }

    /// A count that changes whenever an op is placed in a block or taken out of one (created
    /// ops count when placed, moves and erasures as they detach): while it stays the same, the
    /// program holds the same ops in the same order, and a walk made before still holds.
    /// Attributes and operands may have changed.
    pub fn layout_edits(&self) -> u64 {
        self.layout_edits
    }

    /// Size of the op arena, including erased ops: ids are below this.
    pub fn op_capacity(&self) -> usize {
        self.ops.len()
    }

    /// Size of the value arena: ids are below this.
    pub fn value_capacity(&self) -> usize {
        self.values.len()
    }

    pub fn op(&self, op: OpId) -> &OpData {
        &self.ops[op.index()]
    }

    pub fn is_live(&self, op: OpId) -> bool {
        !self.ops[op.index()].dead()
    }

    pub fn op_name(&self, op: OpId) -> Sym {
        self.ops[op.index()].name
    }

    pub fn op_attrs(&self, op: OpId) -> AttrId {
        self.ops[op.index()].attrs
    }

    pub fn set_op_attrs(&mut self, op: OpId, attrs: AttrId) {
        self.ops[op.index()].attrs = attrs;
        if let Some(log) = &mut self.attr_changes {
            log.push(op);
        }
    }

    /// Starts logging the ops [`Program::set_op_attrs`] changes (once started, it goes on): an
    /// index of ops by attribute reads the log from where it last looked
    /// ([`Program::attr_changes`]).
    pub fn log_attr_changes(&mut self) {
        self.attr_changes.get_or_insert_with(Vec::new);
    }

    /// The ops given a new dictionary since logging started, in order; empty when not logging.
    pub fn attr_changes(&self) -> &[OpId] {
        self.attr_changes.as_deref().unwrap_or(&[])
    }

    pub fn num_operands(&self, op: OpId) -> usize {
        self.ops[op.index()].operands_len as usize
    }

    /// Operand `i` of `op`; `None` for `<<NULL VALUE>>`.
    pub fn operand(&self, op: OpId, i: usize) -> Option<ValueId> {
        let d = &self.ops[op.index()];
        assert!(i < d.operands_len as usize, "operand index out of range");
        opt(self.operands[(d.operands_start as usize) + i].value).map(ValueId)
    }

    /// The operands of `op` in order; `None` for `<<NULL VALUE>>`.
    pub fn operands(&self, op: OpId) -> impl ExactSizeIterator<Item = Option<ValueId>> + '_ {
        let d = &self.ops[op.index()];
        let s = d.operands_start as usize;
        self.operands[s..s + d.operands_len as usize]
            .iter()
            .map(|o| opt(o.value).map(ValueId))
    }

    pub fn num_results(&self, op: OpId) -> usize {
        self.ops[op.index()].results_len() as usize
    }

    pub fn result(&self, op: OpId, i: usize) -> ValueId {
        let d = &self.ops[op.index()];
        assert!(i < d.results_len() as usize, "result index out of range");
        ValueId(d.results_start + i as u32)
    }

    pub fn results(&self, op: OpId) -> impl ExactSizeIterator<Item = ValueId> {
        let d = &self.ops[op.index()];
        (d.results_start..d.results_start + d.results_len()).map(ValueId)
    }

    pub fn regions(&self, op: OpId) -> &[RegionId] {
        match self.ops[op.index()].regions {
            NONE => &[],
            i => &self.op_regions[i as usize],
        }
    }

    pub fn region_blocks(&self, r: RegionId) -> &[BlockId] {
        &self.regions[r.index()].blocks
    }

    /// The block holding `op` (`None` when detached or erased).
    pub fn op_block(&self, op: OpId) -> Option<BlockId> {
        opt(self.ops[op.index()].parent).map(BlockId)
    }

    /// The op whose region holds `block` (`None` for the top block).
    pub fn block_parent_op(&self, block: BlockId) -> Option<OpId> {
        opt(self.blocks[block.index()].parent_region)
            .map(|r| OpId(self.regions[r as usize].parent_op))
    }

    pub fn next_op(&self, op: OpId) -> Option<OpId> {
        opt(self.ops[op.index()].next).map(OpId)
    }

    pub fn prev_op(&self, op: OpId) -> Option<OpId> {
        opt(self.ops[op.index()].prev).map(OpId)
    }

    pub fn first_op(&self, block: BlockId) -> Option<OpId> {
        opt(self.blocks[block.index()].first).map(OpId)
    }

    pub fn last_op(&self, block: BlockId) -> Option<OpId> {
        opt(self.blocks[block.index()].last).map(OpId)
    }

    /// The ops of a block in order.
    pub fn block_ops(&self, block: BlockId) -> BlockOps<'_> {
        BlockOps {
            prog: self,
            next: self.blocks[block.index()].first,
        }
    }

    /// Every live op of the program in print order (pre-order: an op before its regions' ops).
    pub fn walk(&self) -> Vec<OpId> {
        let mut out = Vec::with_capacity(self.live_ops);
        self.walk_block(self.top, &mut out);
        out
    }

    fn walk_block(&self, block: BlockId, out: &mut Vec<OpId>) {
        for op in self.block_ops(block) {
            out.push(op);
            for &r in self.regions(op) {
                for &b in self.region_blocks(r) {
                    self.walk_block(b, out);
                }
            }
        }
    }

    pub fn block_args(&self, block: BlockId) -> &[BlockArg] {
        &self.blocks[block.index()].args
    }

    pub fn block_kwargs(&self, block: BlockId) -> &[Kwarg] {
        &self.blocks[block.index()].kwargs
    }

    pub fn value_type(&self, v: ValueId) -> TypeId {
        self.values[v.index()].ty
    }

    pub fn set_value_type(&mut self, v: ValueId, ty: TypeId) {
        self.values[v.index()].ty = ty;
    }

    pub fn value_def(&self, v: ValueId) -> ValueDef {
        self.values[v.index()].def.unpack()
    }

    /// The op defining `v`, if it is an op result.
    pub fn defining_op(&self, v: ValueId) -> Option<OpId> {
        match self.values[v.index()].def.unpack() {
            ValueDef::Result { op, .. } => Some(op),
            _ => None,
        }
    }

    /// The uses of `v` (most recent first).
    pub fn uses(&self, v: ValueId) -> Uses<'_> {
        Uses {
            prog: self,
            next: self.values[v.index()].first_use,
        }
    }

    pub fn has_uses(&self, v: ValueId) -> bool {
        self.values[v.index()].first_use != NONE
    }

    pub fn num_uses(&self, v: ValueId) -> usize {
        self.uses(v).count()
    }

    /// Records where `op` was written in the source (the parser calls this).
    pub fn set_position(&mut self, op: OpId, offset: usize) {
        if self.positions.len() <= op.index() {
            self.positions.resize(op.index() + 1, u32::MAX);
        }
        self.positions[op.index()] = u32::try_from(offset).unwrap_or(u32::MAX);
    }

    /// Where `op` was written in the source, if it was parsed.
    pub fn position(&self, op: OpId) -> Option<usize> {
        self.positions
            .get(op.index())
            .filter(|&&p| p != u32::MAX)
            .map(|&p| p as usize)
    }

    // ---- construction --------------------------------------------------------------------

    fn new_value(&mut self, ty: TypeId, def: ValueDef) -> ValueId {
        let id = ValueId(u32::try_from(self.values.len()).expect("fewer than 2^32 values"));
        self.values.push(ValueData {
            ty,
            def: PackedDef::pack(def),
            first_use: NONE,
        });
        id
    }

    /// Creates a detached op; place it with [`insert_before`](Self::insert_before) and friends.
    pub fn create_op(
        &mut self,
        name: Sym,
        attrs: AttrId,
        operands: &[Option<ValueId>],
        result_types: &[TypeId],
        syntax: OpSyntax,
    ) -> OpId {
        let id = OpId(u32::try_from(self.ops.len()).expect("fewer than 2^32 ops"));
        let results_len = u32::try_from(result_types.len())
            .ok()
            .filter(|&n| n <= MAX_RESULTS)
            .expect("at most MAX_RESULTS results (the parser refuses more)");
        let syntax_bits = match syntax {
            OpSyntax::Plain => 0,
            OpSyntax::Regions => 1,
            OpSyntax::While => 2,
        };
        let operands_start = self.operands.len() as u32;
        let results_start = self.values.len() as u32;
        for (i, &t) in result_types.iter().enumerate() {
            self.new_value(
                t,
                ValueDef::Result {
                    op: id,
                    index: i as u32,
                },
            );
        }
        self.ops.push(OpData {
            name,
            attrs,
            operands_start,
            operands_len: operands.len() as u32,
            results_start,
            results_flags: results_len | syntax_bits << RESULTS_BITS,
            regions: NONE,
            parent: NONE,
            prev: NONE,
            next: NONE,
        });
        self.push_operands(id, operands);
        id
    }

    /// Adds a region with one empty block to `op` and returns the block.
    pub fn add_region(&mut self, op: OpId) -> BlockId {
        let r = RegionId(self.regions.len() as u32);
        self.regions.push(RegionData {
            blocks: Vec::new(),
            parent_op: op.0,
        });
        let b = self.new_block(r.0);
        self.regions[r.index()].blocks.push(b);
        if self.ops[op.index()].regions == NONE {
            self.ops[op.index()].regions = self.op_regions.len() as u32;
            self.op_regions.push(Vec::new());
        }
        let i = self.ops[op.index()].regions as usize;
        self.op_regions[i].push(r);
        b
    }

    /// Appends a positional argument to `block`.
    pub fn add_block_arg(&mut self, block: BlockId, ty: TypeId, attrs: AttrId) -> ValueId {
        let index = self.blocks[block.index()].args.len() as u32;
        let v = self.new_value(ty, ValueDef::Arg { block, index });
        self.blocks[block.index()]
            .args
            .push(BlockArg { value: v, attrs });
        v
    }

    /// Appends a keyword argument to `block`.
    pub fn add_kwarg(&mut self, block: BlockId, name: Sym, ty: TypeId, attrs: AttrId) -> ValueId {
        let index = self.blocks[block.index()].kwargs.len() as u32;
        let v = self.new_value(ty, ValueDef::Kwarg { block, index });
        self.blocks[block.index()].kwargs.push(Kwarg {
            name,
            value: v,
            attrs,
        });
        v
    }

    /// The keyword argument of `block` named `name`. Linear in the number of keyword arguments;
    /// passes that look many up build their own index.
    pub fn find_kwarg(&self, block: BlockId, name: Sym) -> Option<ValueId> {
        self.blocks[block.index()]
            .kwargs
            .iter()
            .find(|k| k.name == name)
            .map(|k| k.value)
    }

    // ---- placement -----------------------------------------------------------------------

    /// Appends a detached op at the end of `block`.
    pub fn append(&mut self, block: BlockId, op: OpId) {
        let last = self.blocks[block.index()].last;
        self.link(op, block, last, NONE);
    }

    /// Inserts a detached op at the start of `block`.
    pub fn prepend(&mut self, block: BlockId, op: OpId) {
        let first = self.blocks[block.index()].first;
        self.link(op, block, NONE, first);
    }

    /// Inserts a detached op just before `anchor`.
    pub fn insert_before(&mut self, anchor: OpId, op: OpId) {
        let a = &self.ops[anchor.index()];
        assert!(a.parent != NONE, "anchor op is not in a block");
        let (block, prev) = (BlockId(a.parent), a.prev);
        self.link(op, block, prev, anchor.0);
    }

    /// Inserts a detached op just after `anchor`.
    pub fn insert_after(&mut self, anchor: OpId, op: OpId) {
        let a = &self.ops[anchor.index()];
        assert!(a.parent != NONE, "anchor op is not in a block");
        let (block, next) = (BlockId(a.parent), a.next);
        self.link(op, block, anchor.0, next);
    }

    fn link(&mut self, op: OpId, block: BlockId, prev: u32, next: u32) {
        let d = &mut self.ops[op.index()];
        assert!(
            d.parent == NONE && !d.dead(),
            "op is already placed or erased"
        );
        d.parent = block.0;
        d.prev = prev;
        d.next = next;
        let b = &mut self.blocks[block.index()];
        if prev == NONE {
            b.first = op.0;
        } else {
            self.ops[prev as usize].next = op.0;
        }
        let b = &mut self.blocks[block.index()];
        if next == NONE {
            b.last = op.0;
        } else {
            self.ops[next as usize].prev = op.0;
        }
        self.blocks[block.index()].len += 1;
        self.live_ops += 1;
        self.layout_edits += 1;
    }

    /// Takes `op` out of its block, keeping it and its operands (to move it elsewhere).
    pub fn detach(&mut self, op: OpId) {
        let d = &self.ops[op.index()];
        if d.parent == NONE {
            return;
        }
        let (block, prev, next) = (d.parent, d.prev, d.next);
        let b = &mut self.blocks[block as usize];
        if prev == NONE {
            b.first = next;
        } else {
            self.ops[prev as usize].next = next;
        }
        let b = &mut self.blocks[block as usize];
        if next == NONE {
            b.last = prev;
        } else {
            self.ops[next as usize].prev = prev;
        }
        self.blocks[block as usize].len -= 1;
        let d = &mut self.ops[op.index()];
        d.parent = NONE;
        d.prev = NONE;
        d.next = NONE;
        self.live_ops -= 1;
        self.layout_edits += 1;
    }

    /// Moves `op` just before `anchor`.
    pub fn move_before(&mut self, op: OpId, anchor: OpId) {
        if op == anchor {
            return;
        }
        self.detach(op);
        self.insert_before(anchor, op);
    }

    /// Erases `op` (and any ops nested in its regions). Its results must have no uses left
    /// outside the erased ops.
    ///
    /// # Panics
    /// If a result of `op` is still used: replace the uses first. This is a bug in the caller,
    /// never a property of the input.
    pub fn erase(&mut self, op: OpId) {
        for r in self.regions(op).to_vec() {
            for b in self.regions[r.index()].blocks.clone() {
                let ops: Vec<OpId> = self.block_ops(b).collect();
                for inner in ops.into_iter().rev() {
                    self.drop_operands(inner);
                }
                let ops: Vec<OpId> = self.block_ops(b).collect();
                for inner in ops.into_iter().rev() {
                    self.erase(inner);
                }
            }
        }
        for v in self.results(op) {
            assert!(
                !self.has_uses(v),
                "erasing an op whose result is still used"
            );
        }
        self.drop_operands(op);
        self.detach(op);
        self.ops[op.index()].results_flags |= DEAD_BIT;
    }

    fn drop_operands(&mut self, op: OpId) {
        let d = &self.ops[op.index()];
        let s = d.operands_start;
        for slot in s..s + d.operands_len {
            self.unlink_use(slot);
        }
    }

    // ---- uses ----------------------------------------------------------------------------

    fn link_use(&mut self, slot: u32, v: ValueId) {
        let first = self.values[v.index()].first_use;
        let o = &mut self.operands[slot as usize];
        o.value = v.0;
        o.prev_use = NONE;
        o.next_use = first;
        if first != NONE {
            self.operands[first as usize].prev_use = slot;
        }
        self.values[v.index()].first_use = slot;
    }

    fn unlink_use(&mut self, slot: u32) {
        let o = &self.operands[slot as usize];
        if o.value == NONE {
            return;
        }
        let (v, prev, next) = (o.value, o.prev_use, o.next_use);
        if prev == NONE {
            self.values[v as usize].first_use = next;
        } else {
            self.operands[prev as usize].next_use = next;
        }
        if next != NONE {
            self.operands[next as usize].prev_use = prev;
        }
        let o = &mut self.operands[slot as usize];
        o.value = NONE;
        o.prev_use = NONE;
        o.next_use = NONE;
    }

    /// Sets operand `i` of `op` (`None`: `<<NULL VALUE>>`). O(1).
    pub fn set_operand(&mut self, op: OpId, i: usize, v: Option<ValueId>) {
        let d = &self.ops[op.index()];
        assert!(i < d.operands_len as usize, "operand index out of range");
        let slot = d.operands_start + i as u32;
        self.unlink_use(slot);
        if let Some(v) = v {
            self.link_use(slot, v);
        }
    }

    /// Appends an operand to `op`'s list (a variadic op such as `builtin.combine` growing by
    /// one). An op's operands are contiguous in the operand arena: when the slot after the list
    /// is not a spare of `op`, the list moves to the end of the arena followed by as many spare
    /// slots as it has operands, so k appends take O(k) time and slots in all, whatever is built
    /// between them. A spare is unlinked and names `op` as its user; an op's earlier lists lie
    /// before its current one, so the slot after the list is a spare exactly when it names `op`.
    pub fn append_operand(&mut self, op: OpId, v: Option<ValueId>) {
        let d = &self.ops[op.index()];
        let (start, len) = (d.operands_start, d.operands_len);
        let after = self.operands.get((start + len) as usize);
        if !after.is_some_and(|s| s.user == op.0 && s.value == NONE) {
            let old: Vec<Option<ValueId>> = self.operands(op).collect();
            self.drop_operands(op);
            let moved = self.push_operands(op, &old);
            for _ in 0..len.max(1) {
                self.operands.push(OperandSlot {
                    value: NONE,
                    user: op.0,
                    prev_use: NONE,
                    next_use: NONE,
                });
            }
            self.ops[op.index()].operands_start = moved;
        }
        let d = &mut self.ops[op.index()];
        let slot = d.operands_start + d.operands_len;
        d.operands_len += 1;
        if let Some(v) = v {
            self.link_use(slot, v);
        }
    }

    /// Appends operand slots for `user` to the operand arena, linked into their values' use
    /// lists; returns the first slot.
    fn push_operands(&mut self, user: OpId, operands: &[Option<ValueId>]) -> u32 {
        let start = self.operands.len() as u32;
        for &v in operands {
            let slot = self.operands.len() as u32;
            self.operands.push(OperandSlot {
                value: NONE,
                user: user.0,
                prev_use: NONE,
                next_use: NONE,
            });
            if let Some(v) = v {
                self.link_use(slot, v);
            }
        }
        start
    }

    /// Replaces every use of `old` by `new`. O(uses of `old`).
    pub fn replace_all_uses(&mut self, old: ValueId, new: ValueId) {
        if old == new {
            return;
        }
        while let Some(slot) = opt(self.values[old.index()].first_use) {
            self.unlink_use(slot);
            self.link_use(slot, new);
        }
    }

    /// Replaces the uses of `old` by `new` in the ops `keep` accepts. O(uses of `old`).
    pub fn replace_uses_where(
        &mut self,
        old: ValueId,
        new: ValueId,
        mut keep: impl FnMut(Use) -> bool,
    ) {
        if old == new {
            return;
        }
        let slots: Vec<u32> = {
            let mut v = Vec::new();
            let mut s = self.values[old.index()].first_use;
            while s != NONE {
                v.push(s);
                s = self.operands[s as usize].next_use;
            }
            v
        };
        for slot in slots {
            let o = &self.operands[slot as usize];
            let user = OpId(o.user);
            let index = slot - self.ops[user.index()].operands_start;
            if keep(Use { op: user, index }) {
                self.unlink_use(slot);
                self.link_use(slot, new);
            }
        }
    }
}

/// Iterator over the ops of a block.
pub struct BlockOps<'a> {
    prog: &'a Program,
    next: u32,
}

impl Iterator for BlockOps<'_> {
    type Item = OpId;
    fn next(&mut self) -> Option<OpId> {
        let cur = opt(self.next)?;
        self.next = self.prog.ops[cur as usize].next;
        Some(OpId(cur))
    }
}

/// Iterator over the uses of a value.
pub struct Uses<'a> {
    prog: &'a Program,
    next: u32,
}

impl Iterator for Uses<'_> {
    type Item = Use;
    fn next(&mut self) -> Option<Use> {
        let slot = opt(self.next)?;
        let o = &self.prog.operands[slot as usize];
        self.next = o.next_use;
        let op = OpId(o.user);
        Some(Use {
            op,
            index: slot - self.prog.ops[op.index()].operands_start,
        })
    }
}

#[cfg(test)]
impl Program {
    fn block_len(&self, block: BlockId) -> usize {
        self.blocks[block.index()].len as usize
    }

    /// Moves `op` just after `anchor`.
    fn move_after(&mut self, op: OpId, anchor: OpId) {
        if op == anchor {
            return;
        }
        self.detach(op);
        self.insert_after(anchor, op);
    }

    /// Replaces the whole operand list of `op`.
    fn set_operands(&mut self, op: OpId, operands: &[Option<ValueId>]) {
        self.drop_operands(op);
        let start = self.push_operands(op, operands);
        let d = &mut self.ops[op.index()];
        d.operands_start = start;
        d.operands_len = operands.len() as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Context;

    fn setup() -> (Context, Program, Sym) {
        let mut ctx = Context::default();
        let name = ctx.sym("t.op");
        (ctx, Program::new(), name)
    }

    #[test]
    fn insert_erase_and_move_keep_the_list_right() {
        let (_ctx, mut p, n) = setup();
        let t = Context::NULL_TYPE;
        let b = p.top_block();
        let a = p.create_op(n, Context::EMPTY_ATTRS, &[], &[t], OpSyntax::Plain);
        p.append(b, a);
        let c = p.create_op(n, Context::EMPTY_ATTRS, &[], &[t], OpSyntax::Plain);
        p.append(b, c);
        let m = p.create_op(n, Context::EMPTY_ATTRS, &[], &[t], OpSyntax::Plain);
        p.insert_after(a, m);
        assert_eq!(p.block_ops(b).collect::<Vec<_>>(), vec![a, m, c]);
        p.move_before(c, a);
        assert_eq!(p.block_ops(b).collect::<Vec<_>>(), vec![c, a, m]);
        p.move_after(c, m);
        assert_eq!(p.block_ops(b).collect::<Vec<_>>(), vec![a, m, c]);
        p.erase(m);
        assert_eq!(p.block_ops(b).collect::<Vec<_>>(), vec![a, c]);
        assert_eq!(p.num_ops(), 2);
        assert_eq!(p.block_len(b), 2);
        assert_eq!((p.first_op(b), p.last_op(b)), (Some(a), Some(c)));
        p.erase(a);
        p.erase(c);
        assert_eq!(p.block_ops(b).count(), 0);
        assert_eq!((p.first_op(b), p.last_op(b)), (None, None));
    }

    #[test]
    fn replace_uses_keeps_use_lists_right() {
        let (_ctx, mut p, n) = setup();
        let t = Context::NULL_TYPE;
        let b = p.top_block();
        let d1 = p.create_op(n, Context::EMPTY_ATTRS, &[], &[t], OpSyntax::Plain);
        let d2 = p.create_op(n, Context::EMPTY_ATTRS, &[], &[t], OpSyntax::Plain);
        p.append(b, d1);
        p.append(b, d2);
        let (v1, v2) = (p.result(d1, 0), p.result(d2, 0));
        let u1 = p.create_op(
            n,
            Context::EMPTY_ATTRS,
            &[Some(v1), None, Some(v1)],
            &[],
            OpSyntax::Plain,
        );
        let u2 = p.create_op(n, Context::EMPTY_ATTRS, &[Some(v1)], &[], OpSyntax::Plain);
        p.append(b, u1);
        p.append(b, u2);
        assert_eq!(p.num_uses(v1), 3);
        p.replace_uses_where(v1, v2, |u| u.op == u1 && u.index == 2);
        assert_eq!(p.num_uses(v1), 2);
        assert_eq!(p.operand(u1, 2), Some(v2));
        assert_eq!(p.operand(u1, 0), Some(v1));
        assert_eq!(p.operand(u1, 1), None);
        p.replace_all_uses(v1, v2);
        assert!(!p.has_uses(v1));
        let mut uses: Vec<Use> = p.uses(v2).collect();
        uses.sort();
        assert_eq!(
            uses,
            vec![
                Use { op: u1, index: 0 },
                Use { op: u1, index: 2 },
                Use { op: u2, index: 0 }
            ]
        );
        p.set_operand(u2, 0, None);
        assert_eq!(p.num_uses(v2), 2);
        p.set_operands(u1, &[Some(v1)]);
        assert_eq!(p.num_uses(v2), 0);
        assert_eq!(p.num_uses(v1), 1);
        p.erase(u1);
        p.erase(d1);
        assert_eq!(p.num_ops(), 2);
    }

    #[test]
    fn appended_operands_keep_their_order_uses_and_amortized_slots() {
        let (_ctx, mut p, n) = setup();
        let t = Context::NULL_TYPE;
        let b = p.top_block();
        let d = p.create_op(n, Context::EMPTY_ATTRS, &[], &[t, t], OpSyntax::Plain);
        p.append(b, d);
        let (v0, v1) = (p.result(d, 0), p.result(d, 1));
        let c = p.create_op(n, Context::EMPTY_ATTRS, &[Some(v0)], &[t], OpSyntax::Plain);
        p.append(b, c);
        let mut want = vec![Some(v0)];
        for k in 0..100 {
            // An op built between appends takes the slots after the list: the list moves.
            let other = p.create_op(n, Context::EMPTY_ATTRS, &[Some(v1)], &[], OpSyntax::Plain);
            p.append(b, other);
            let v = if k % 3 == 0 { None } else { Some(v1) };
            p.append_operand(c, v);
            want.push(v);
            assert_eq!(p.operands(c).collect::<Vec<_>>(), want);
        }
        assert_eq!(p.num_uses(v0), 1);
        // v1: the 100 ops built in between, and 66 of the appended operands.
        assert_eq!(p.num_uses(v1), 100 + 66);
        assert_eq!(p.uses(v0).next(), Some(Use { op: c, index: 0 }));
        // Moved lists leave their old slots behind, but doubling bounds them.
        assert!(
            p.operands.len() < 100 + 4 * 101,
            "{} slots",
            p.operands.len()
        );
    }

    #[test]
    #[should_panic(expected = "still used")]
    fn erasing_a_used_value_is_a_bug() {
        let (_ctx, mut p, n) = setup();
        let b = p.top_block();
        let d = p.create_op(
            n,
            Context::EMPTY_ATTRS,
            &[],
            &[Context::NULL_TYPE],
            OpSyntax::Plain,
        );
        p.append(b, d);
        let v = p.result(d, 0);
        let u = p.create_op(n, Context::EMPTY_ATTRS, &[Some(v)], &[], OpSyntax::Plain);
        p.append(b, u);
        p.erase(d);
    }

    #[test]
    fn regions_and_kwargs() {
        let (mut ctx, mut p, n) = setup();
        let top = p.top_block();
        let k = ctx.sym("w@GRAD@MERGE");
        let kv = p.add_kwarg(top, k, Context::UNKNOWN_TYPE, Context::EMPTY_ATTRS);
        assert_eq!(p.find_kwarg(top, k), Some(kv));
        let r = p.create_op(n, Context::EMPTY_ATTRS, &[Some(kv)], &[], OpSyntax::Regions);
        p.append(top, r);
        let inner = p.add_region(r);
        let i = p.create_op(n, Context::EMPTY_ATTRS, &[Some(kv)], &[], OpSyntax::Plain);
        p.append(inner, i);
        assert_eq!(p.block_parent_op(inner), Some(r));
        assert_eq!(p.walk(), vec![r, i]);
        p.erase(r);
        assert!(!p.has_uses(kv));
        assert_eq!(p.num_ops(), 0);
    }
}
