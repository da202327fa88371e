//! Step 3 of parsing: the lines walked in order with a stack of open blocks; `%N` names
//! resolved, names, types and dictionaries interned; errors reported in file order.

use super::*;

pub(super) struct Frame {
    pub(super) block: BlockId,
    /// The op owning this block, for regions.
    pub(super) owner: Option<OpId>,
    pub(super) offset: usize,
    pub(super) kw_open: bool,
    pub(super) seen_op: bool,
}

pub(super) struct Builder<'a, 'c> {
    pub(super) src: &'a SourceFile,
    pub(super) ctx: &'c mut Context,
    /// Parsed op lines not yet built, by chunk. A chunk is dropped as soon as it is built, so
    /// the raw form of a large file never lives beside all of its IR.
    pub(super) feed: ChunkFeed<'a>,
    /// The chunk being built and the index of its next op.
    pub(super) cur: RawChunk<'a>,
    pub(super) cur_idx: usize,
    pub(super) attr_cache: FxHashMap<&'a str, AttrId>,
    pub(super) type_cache: FxHashMap<&'a str, TypeId>,
    /// Global ids of the current chunk's dictionaries and types, by chunk-local index, resolved
    /// on first use ([`UNRESOLVED`] until then) so that errors come in line order.
    pub(super) chunk_attrs: Vec<AttrId>,
    pub(super) chunk_types: Vec<TypeId>,
    /// The store's ids of the current chunk's attribute keys, values and pairs.
    pub(super) chunk_ids: LocalIds,
    pub(super) vals: Vec<Option<ValueId>>,
    pub(super) rtys: Vec<TypeId>,
}

pub(super) const UNRESOLVED: u32 = u32::MAX;

/// Maps `%N` to values: a dense vector for the usual dense numbering, a hash map beyond.
#[derive(Default)]
pub(super) struct Names<'a> {
    pub(super) dense: Vec<u32>,
    pub(super) sparse: FxHashMap<u64, ValueId>,
    pub(super) named: FxHashMap<&'a str, ValueId>,
}

pub(super) const DENSE_LIMIT: u64 = 1 << 24;

impl<'a> Names<'a> {
    pub(super) fn get_num(&self, n: u64) -> Option<ValueId> {
        if n < self.dense.len() as u64 {
            let v = self.dense[n as usize];
            (v != u32::MAX).then_some(ValueId(v))
        } else {
            self.sparse.get(&n).copied()
        }
    }

    /// Returns false if `n` was already defined.
    pub(super) fn define_num(&mut self, n: u64, v: ValueId) -> bool {
        if self.get_num(n).is_some() {
            return false;
        }
        if n < DENSE_LIMIT {
            if n >= self.dense.len() as u64 {
                self.dense
                    .resize((n as usize + 1).max(self.dense.len() * 2), u32::MAX);
            }
            self.dense[n as usize] = v.0;
        } else {
            self.sparse.insert(n, v);
        }
        true
    }
}

impl<'a, 'c> Builder<'a, 'c> {
    pub(super) fn new(src: &'a SourceFile, ctx: &'c mut Context, feed: ChunkFeed<'a>) -> Self {
        Builder {
            src,
            ctx,
            feed,
            cur: RawChunk::default(),
            cur_idx: 0,
            attr_cache: FxHashMap::default(),
            type_cache: FxHashMap::default(),
            chunk_attrs: Vec::new(),
            chunk_types: Vec::new(),
            chunk_ids: LocalIds::default(),
            vals: Vec::new(),
            rtys: Vec::new(),
        }
    }

    pub(super) fn err(&self, at: &str, msg: impl Into<String>) -> Diagnostic {
        err_at(self.src, at, msg)
    }

    /// Builds the program whose opening line is `lines[start]`; returns it and the index of
    /// the line after its closing `}`.
    pub(super) fn program(
        &mut self,
        lines: &[Line<'a>],
        start: usize,
    ) -> Result<(Program, usize), Diagnostic> {
        let mut prog = Program::new();
        prog.reserve(lines.len().saturating_sub(start));
        let mut names = Names::default();
        let mut stack = vec![Frame {
            block: prog.top_block(),
            owner: None,
            offset: lines[start].offset,
            kw_open: false,
            seen_op: false,
        }];
        let mut i = start + 1;
        while i < lines.len() {
            let l = lines[i];
            i += 1;
            let Some(top) = stack.last_mut() else { break };
            match l.kind {
                Kind::Blank | Kind::Comment => {}
                Kind::Close => {
                    stack.pop();
                    if stack.is_empty() {
                        return Ok((prog, i));
                    }
                }
                Kind::Else => {
                    let owner = top.owner;
                    match owner {
                        Some(op) if prog.op(op).syntax() == OpSyntax::Regions => {
                            stack.pop();
                            let b = prog.add_region(op);
                            stack.push(Frame {
                                block: b,
                                owner: Some(op),
                                offset: l.offset,
                                kw_open: false,
                                seen_op: false,
                            });
                        }
                        _ => {
                            return Err(Diagnostic::at(
                                self.src,
                                l.offset,
                                "`} else {` outside the region of a `pd_op.if`-style op",
                            ))
                        }
                    }
                }
                Kind::KwHeader => {
                    if top.seen_op || top.kw_open || !prog.block_kwargs(top.block).is_empty() {
                        return Err(Diagnostic::at(
                            self.src,
                            l.offset,
                            "`^kw:` must come first in a block, once",
                        )
                        .with_hint("keyword arguments are listed before the block's ops"));
                    }
                    top.kw_open = true;
                }
                Kind::Kwarg => {
                    if !top.kw_open || top.seen_op {
                        return Err(Diagnostic::at(
                            self.src,
                            l.offset,
                            "keyword argument outside a `^kw:` list",
                        ));
                    }
                    let block = top.block;
                    self.kwarg(&mut prog, &mut names, block, l)?;
                }
                Kind::Args => {
                    if top.seen_op || top.kw_open || !prog.block_args(top.block).is_empty() {
                        return Err(Diagnostic::at(
                            self.src,
                            l.offset,
                            "block arguments must be the first line of a block",
                        ));
                    }
                    let block = top.block;
                    self.block_args(&mut prog, &mut names, block, l)?;
                }
                Kind::Op => {
                    top.seen_op = true;
                    top.kw_open = false;
                    let block = top.block;
                    let (op, opens) = self.op(&mut prog, &mut names, block, l)?;
                    if opens {
                        if stack.len() >= MAX_REGION_DEPTH {
                            return Err(Diagnostic::at(
                                self.src,
                                l.offset,
                                format!("regions nested deeper than {MAX_REGION_DEPTH} levels"),
                            ));
                        }
                        let b = prog.add_region(op);
                        stack.push(Frame {
                            block: b,
                            owner: Some(op),
                            offset: l.offset,
                            kw_open: false,
                            seen_op: false,
                        });
                    }
                }
                Kind::Open | Kind::StartupOpen | Kind::Other => {
                    let msg = if l.text.starts_with('{') || l.text.starts_with("startup") {
                        "a program cannot start inside another program"
                    } else {
                        "expected an op line `(%0) = \"dialect.op\" (...) ...`, `}` or `^kw:`"
                    };
                    return Err(Diagnostic::at(self.src, l.offset, msg));
                }
            }
        }
        let open = stack.last().map_or(lines[start].offset, |f| f.offset);
        Err(Diagnostic::at(self.src, open, "this `{` is never closed")
            .with_hint("the file ends before the matching `}`"))
    }

    pub(super) fn kwarg(
        &mut self,
        prog: &mut Program,
        names: &mut Names<'a>,
        block: BlockId,
        l: Line<'a>,
    ) -> Result<(), Diagnostic> {
        check_nesting(self.src, &l)?;
        let pairs =
            PirParser::parse(Rule::kwarg_line, l.text).map_err(|e| pest_error(self.src, &l, e))?;
        let mut name = "";
        let mut attrs = Context::EMPTY_ATTRS;
        for p in pairs.flatten().take(1).flat_map(|p| p.into_inner()) {
            match p.as_rule() {
                Rule::kwarg_ref => name = p.as_str(),
                Rule::attr_dict => attrs = self.attrs(p.as_str())?,
                _ => {}
            }
        }
        if names.named.contains_key(name) {
            return Err(self.err(name, format!("duplicate definition of {name}")));
        }
        let sym = self.ctx.sym(&name["%kwarg_".len()..]);
        let v = prog.add_kwarg(block, sym, Context::UNKNOWN_TYPE, attrs);
        names.named.insert(name, v);
        Ok(())
    }

    pub(super) fn block_args(
        &mut self,
        prog: &mut Program,
        names: &mut Names<'a>,
        block: BlockId,
        l: Line<'a>,
    ) -> Result<(), Diagnostic> {
        check_nesting(self.src, &l)?;
        let pairs = PirParser::parse(Rule::block_args_line, l.text)
            .map_err(|e| pest_error(self.src, &l, e))?;
        for arg in pairs.flatten().take(1).flat_map(|p| p.into_inner()) {
            if arg.as_rule() != Rule::block_arg {
                continue;
            }
            let mut name = "";
            let mut attrs = Context::EMPTY_ATTRS;
            for p in arg.into_inner() {
                match p.as_rule() {
                    Rule::arg_ref => name = p.as_str(),
                    Rule::attr_dict => attrs = self.attrs(p.as_str())?,
                    _ => {}
                }
            }
            if names.named.contains_key(name) {
                return Err(self.err(name, format!("duplicate definition of {name}")));
            }
            let v = prog.add_block_arg(block, Context::UNKNOWN_TYPE, attrs);
            names.named.insert(name, v);
        }
        Ok(())
    }

    pub(super) fn op(
        &mut self,
        prog: &mut Program,
        names: &mut Names<'a>,
        block: BlockId,
        l: Line<'a>,
    ) -> Result<(OpId, bool), Diagnostic> {
        while self.cur_idx == self.cur.ops.len() {
            if let Some(e) = self.cur.error.take() {
                return Err(e);
            }
            let Some(next) = self.feed.next() else {
                break;
            };
            self.cur = next;
            self.cur_idx = 0;
            self.chunk_attrs.clear();
            self.chunk_attrs
                .resize(self.cur.attrs.len(), AttrId(UNRESOLVED));
            self.chunk_ids.reset(&self.cur.attrs);
            self.chunk_types.clear();
            self.chunk_types
                .resize(self.cur.type_list.len(), TypeId(UNRESOLVED));
        }
        let mut c = std::mem::take(&mut self.cur);
        let Some(r) = c.ops.get(self.cur_idx).cloned() else {
            return Err(Diagnostic::at(
                self.src,
                l.offset,
                "internal: op line without a parse",
            ));
        };
        self.cur_idx += 1;
        let operands = &c.operands[r.operands.0 as usize..r.operands.1 as usize];
        let results = &c.values[r.results.0 as usize..r.results.1 as usize];
        if results.len() > MAX_RESULTS as usize {
            return Err(Diagnostic::at(
                self.src,
                l.offset,
                format!("an op with more than {MAX_RESULTS} results"),
            ));
        }
        let labeled = operands.iter().any(|o| o.label.is_some());

        // Which of the three printed forms this is.
        let syntax = if labeled {
            let ok = operands.first().is_some_and(|o| o.label == Some("cond"))
                && operands.get(1).is_none_or(|o| o.label == Some("inputs"))
                && operands.iter().skip(2).all(|o| o.label.is_none());
            if !ok {
                let at = operands.iter().find_map(|o| o.label).unwrap_or(l.text);
                return Err(self.err(
                    at,
                    "labelled operands are only understood as `(cond=%c, inputs=%a, ...)`",
                ));
            }
            if !r.region_open || r.operand_types.is_some() || r.result_types.is_some() {
                return Err(Diagnostic::at(
                    self.src,
                    l.offset,
                    "a `while`-style op is written `(...) = \"op\" (cond=%c, inputs=...) {`",
                ));
            }
            OpSyntax::While
        } else if r.operand_types.is_some() {
            if r.region_open {
                return Err(self.err(
                    l.text
                        .trim_end()
                        .get(l.text.trim_end().len() - 1..)
                        .unwrap_or(l.text),
                    "an op with a `: (types) -> types` signature cannot open a region",
                ));
            }
            if r.result_types.is_none() {
                return Err(Diagnostic::at(
                    self.src,
                    l.offset + l.text.trim_end().len(),
                    "expected `->` and the result types",
                ));
            }
            OpSyntax::Plain
        } else if r.region_open && r.result_types.is_some() {
            OpSyntax::Regions
        } else {
            return Err(Diagnostic::at(
                self.src,
                l.offset + l.text.trim_end().len(),
                "expected ` : (operand types) -> result types`",
            )
            .with_hint(
                "an op line reads `(%0) = \"dialect.op\" (%1, %2) {attrs} : (types) -> types`",
            ));
        };

        // Operands.
        // Scratch vectors kept across ops: no allocation per op.
        let mut vals = std::mem::take(&mut self.vals);
        vals.clear();
        for o in operands {
            match o.value {
                None => vals.push(None),
                Some(name) => {
                    let v = if name.starts_with("%arg_") || name.starts_with("%kwarg_") {
                        names.named.get(name).copied()
                    } else {
                        let n = self.value_number(name)?;
                        names.get_num(n)
                    };
                    match v {
                        Some(v) => vals.push(Some(v)),
                        None => {
                            return Err(self.err(name, format!("unknown value {name}")).with_hint(
                                "a value must be defined on an earlier line before it is used",
                            ))
                        }
                    }
                }
            }
        }

        // Operand types: check against the values' types, and learn types not printed where
        // a value is defined (keyword and block arguments, while results).
        if let Some((s, e)) = r.operand_types {
            let tys = &c.types[s as usize..e as usize];
            if tys.len() != vals.len() {
                let (n, m) = (vals.len(), tys.len());
                let plural = |k: usize, one: &'static str, many: &'static str| {
                    if k == 1 {
                        one
                    } else {
                        many
                    }
                };
                let (operands_word, types_word) =
                    (plural(n, "operand", "operands"), plural(m, "type", "types"));
                // At the first type without an operand, or the first operand without a type.
                let e = match (tys.get(n), operands.get(m).and_then(|o| o.value)) {
                    (Some(&t), _) => self.err(
                        t,
                        format!("the op has {n} {operands_word} but its signature lists {m} operand {types_word}: this type has no operand (is an operand missing from `(...)`?)"),
                    ),
                    (None, Some(v)) => self.err(
                        v,
                        format!("the op has {n} {operands_word} but its signature lists {m} operand {types_word}: operand {m} ({v}) has no type"),
                    ),
                    (None, None) => self.err(
                        tys.first().copied().unwrap_or(l.text),
                        format!("the op has {n} {operands_word} but its signature lists {m} operand {types_word}"),
                    ),
                };
                return Err(e.with_hint(
                    "the signature `: (T0, T1, ...) -> ...` gives each operand its type, in order (<<NULL TYPE>> for <<NULL VALUE>>)",
                ));
            }
            for (i, (&t, &v)) in tys.iter().zip(&vals).enumerate() {
                let tid = self.chunk_type(&c, s as usize + i)?;
                match v {
                    None => {
                        if tid != Context::NULL_TYPE {
                            return Err(self
                                .err(
                                    t,
                                    format!("operand {i} is <<NULL VALUE>> but its type is {t}"),
                                )
                                .with_hint("an absent operand has type <<NULL TYPE>>"));
                        }
                    }
                    Some(v) => {
                        let have = prog.value_type(v);
                        if have == Context::UNKNOWN_TYPE {
                            prog.set_value_type(v, tid);
                        } else if have != tid {
                            let name = operands[i].value.unwrap_or("");
                            return Err(self.err(
                                t,
                                format!(
                                    "type mismatch: {name} has type {} but is used here as {t}",
                                    self.ctx.type_text(have)
                                ),
                            ));
                        }
                    }
                }
            }
        }

        // Result types.
        let mut rtys = std::mem::take(&mut self.rtys);
        rtys.clear();
        match r.result_types {
            Some((s, e)) => {
                let tys = &c.types[s as usize..e as usize];
                if tys.len() != results.len() {
                    let at = tys.first().copied().unwrap_or(l.text);
                    return Err(self.err(
                        at,
                        format!("{} result types for {} results", tys.len(), results.len()),
                    ));
                }
                for i in s..e {
                    rtys.push(self.chunk_type(&c, i as usize)?);
                }
            }
            None => rtys.resize(results.len(), Context::UNKNOWN_TYPE),
        }

        let name = self.ctx.sym(r.name);
        let attrs = match r.attrs {
            Some(i) => self.chunk_attrs(&mut c.attrs, i as usize),
            None => Context::EMPTY_ATTRS,
        };
        let op = prog.create_op(name, attrs, &vals, &rtys, syntax);
        self.vals = vals;
        self.rtys = rtys;
        prog.append(block, op);
        prog.set_position(op, l.offset);
        for (i, &res) in results.iter().enumerate() {
            let n = self.value_number(res)?;
            if !names.define_num(n, prog.result(op, i)) {
                return Err(self
                    .err(res, format!("duplicate definition of {res}"))
                    .with_hint("every value is defined once"));
            }
        }
        self.cur = c;
        Ok((op, r.region_open))
    }

    pub(super) fn value_number(&self, name: &str) -> Result<u64, Diagnostic> {
        name[1..]
            .parse::<u64>()
            .ok()
            .filter(|&n| n < u32::MAX as u64)
            .ok_or_else(|| self.err(name, format!("value number {name} is too large")))
    }

    /// Interns the dictionary written `text`, parsing it unless the same text was seen before.
    pub(super) fn attrs(&mut self, text: &'a str) -> Result<AttrId, Diagnostic> {
        if let Some(&id) = self.attr_cache.get(text) {
            return Ok(id);
        }
        let dict = parse_dict_text(self.src, text)?;
        let id = self.ctx.intern_attrs(dict);
        self.attr_cache.insert(text, id);
        Ok(id)
    }

    /// The global id of the chunk's dictionary `i` (parsed in the parallel phase).
    pub(super) fn chunk_attrs(&mut self, dicts: &mut LocalDicts, i: usize) -> AttrId {
        let id = self.chunk_attrs[i];
        if id.0 != UNRESOLVED {
            return id;
        }
        // Interned by structure, not looked up by text in a file-wide cache: comparing with
        // text seen chunks ago would read back pages of a mapped file already released.
        let id = self.ctx.intern_local_attrs(dicts, &mut self.chunk_ids, i);
        self.chunk_attrs[i] = id;
        id
    }

    /// The global type of entry `i` of chunk `c`'s `types`.
    pub(super) fn chunk_type(&mut self, c: &RawChunk<'a>, i: usize) -> Result<TypeId, Diagnostic> {
        let local = c.type_ids[i] as usize;
        let id = self.chunk_types[local];
        if id.0 != UNRESOLVED {
            return Ok(id);
        }
        let id = self.ty(c.types[i])?;
        self.chunk_types[local] = id;
        Ok(id)
    }

    pub(super) fn ty(&mut self, text: &'a str) -> Result<TypeId, Diagnostic> {
        if let Some(&id) = self.type_cache.get(text) {
            return Ok(id);
        }
        let pairs = PirParser::parse(Rule::type_full, text)
            .map_err(|_| self.err(text, format!("malformed type `{text}`")))?;
        let Some(p) = pairs.flatten().find(|p| p.as_rule() == Rule::ty) else {
            return Err(self.err(text, format!("malformed type `{text}`")));
        };
        let ty = self.type_of(p)?;
        let id = self.ctx.intern_type(ty);
        self.type_cache.insert(text, id);
        Ok(id)
    }

    pub(super) fn type_of(&mut self, ty: Pair<'a, Rule>) -> Result<Type, Diagnostic> {
        let text = ty.as_str();
        let Some(p) = ty.into_inner().next() else {
            return Err(self.err(text, format!("malformed type `{text}`")));
        };
        Ok(match p.as_rule() {
            Rule::null_type => Type::Null,
            Rule::vec_type => {
                let mut items = Vec::new();
                for q in p.into_inner() {
                    let t = self.type_of(q)?;
                    items.push(self.ctx.intern_type(t));
                }
                Type::Vec(items)
            }
            Rule::tensor_type | Rule::dist_type => {
                let dist = p.as_rule() == Rule::dist_type;
                let mut shape = Vec::new();
                let mut dtype = None;
                let mut dist_attr = None;
                for q in p.into_inner() {
                    match q.as_rule() {
                        Rule::dim => shape.push(q.as_str().parse::<i64>().map_err(|_| self.err(q.as_str(), format!("dimension {} is too large", q.as_str())))?),
                        Rule::dtype => {
                            dtype = Some(DType::from_short_name(q.as_str()).ok_or_else(|| {
                                self.err(q.as_str(), format!("unknown element type `{}`", q.as_str()))
                                    .with_hint("element types are f32, f64, f16, bf16, i64, i32, i16, i8, ui8, b, c64, c128")
                            })?)
                        }
                        Rule::tensor_dist => {
                            dist_attr = Some(tensor_dist(q).map_err(|at| {
                                self.err(at, format!("malformed distribution in `{text}`"))
                            })?)
                        }
                        _ => {}
                    }
                }
                let Some(dtype) = dtype else {
                    return Err(self.err(text, format!("malformed type `{text}`")));
                };
                if dist {
                    Type::Dist {
                        shape,
                        dtype,
                        dist: dist_attr.unwrap_or_default(),
                    }
                } else {
                    Type::Tensor { shape, dtype }
                }
            }
            _ => Type::Opaque(p.as_str().to_string()),
        })
    }
}
