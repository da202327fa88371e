//! Inputs and initial state for a run: the `*.numerics.json` layout, a seeded generator, and
//! the dump written by `irw run --dump`.
//!
//! The JSON layout is the one of `fixtures/paddle/*.numerics.json`: `inputs` maps each fed
//! `pd_op.data` name to a (nested-list) batch; `state_init` maps persistable names to
//! `{shape, dtype, values}` and replaces what the startup program computed (Paddle's random
//! initializers cannot be reproduced outside Paddle). Values are f32 (or bf16) widened to
//! f64, so parsing them as f32 gives the exact bits back. A dump uses the same object form
//! under `state`.
//!
//! A feed is read as a stream ([`Feed::parse_limited`]): numbers go straight into the tensor's
//! buffer (4 bytes each for a float32 tensor, 8 for the others), never into a JSON tree, and
//! other keys of a numerics file are skipped without being built. The buffers are counted
//! against `--max-memory` as they grow, so a feed too large for the limit is refused while it
//! is read, naming the feed, instead of after the whole tree exists (which cost about 22 times
//! the file).
//!
//! What a feed must agree with is checked against the program ([`Feed::validate`]): every
//! input the program reads is fed, every fed input is read, all inputs have the same rows,
//! and every `state_init` entry names a persistable of the program and has its declared dtype
//! and shape.

use std::cell::{Cell, RefCell};
use std::fmt;

use indexmap::IndexMap;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::diag::{Diagnostic, SourceFile};
use crate::exec::dtype::DType;
use crate::exec::interp::Sources;
use crate::exec::kernels::cast::cast;
use crate::exec::rng::Rng;
use crate::exec::scope::Scope;
use crate::exec::tensor::{numel, Data, Tensor};
use crate::ir::{Attr, Context, Module, OpId, Program};

/// Inputs (full batch) and initial persistables from a feed file.
#[derive(Clone, Debug, Default)]
pub struct Feed {
    pub inputs: IndexMap<String, Tensor>,
    pub state: IndexMap<String, Tensor>,
    /// Whether the file has an `inputs` key at all (a feed without one is refused for a
    /// program that reads inputs: it would silently run on generated data).
    pub has_inputs: bool,
    /// The inputs whose values are written as `true`/`false`: only an input its data op reads
    /// as `bool` may be ([`Feed::validate`]).
    pub boolean_inputs: Vec<String>,
}

/// A diagnostic at byte `offset` of the feed file.
fn bad(file: &str, text: &str, offset: usize, msg: impl std::fmt::Display) -> Diagnostic {
    Diagnostic::at(&SourceFile::new(file, text), offset, format!("{msg}"))
}

/// Where the key `"key"` is written in `text`, searching from `from` (JSON values carry no
/// positions; a feed names each key once per object, so the first occurrence after the
/// enclosing key is the one meant). Falls back to `from`.
fn key_offset(text: &str, from: usize, key: &str) -> usize {
    let quoted = serde_json::to_string(key).unwrap_or_default();
    text.get(from..)
        .and_then(|t| t.find(&quoted))
        .map_or(from, |i| from + i)
}

/// Where `section.key` is written (`key` empty: the section's own key).
fn entry_offset(text: &str, section: &str, key: &str) -> usize {
    let at = key_offset(text, 0, section);
    if key.is_empty() {
        at
    } else {
        key_offset(text, at, key)
    }
}

/// Where the key whose closing quote is at `quote` begins (its opening quote): serde_json
/// reports an error a visitor raises right after a key at that key's last character.
fn key_start(text: &str, quote: usize) -> usize {
    let bytes = text.as_bytes();
    if bytes.get(quote) != Some(&b'"') {
        return quote;
    }
    (0..quote)
        .rev()
        .find(|&i| bytes[i] == b'"' && (i == 0 || bytes[i - 1] != b'\\'))
        .unwrap_or(quote)
}

/// The byte offset of serde_json's 1-based (line, column).
fn line_col_offset(text: &str, line: usize, col: usize) -> usize {
    let start = if line <= 1 {
        0
    } else {
        text.match_indices('\n')
            .nth(line - 2)
            .map_or(text.len(), |(i, _)| i + 1)
    };
    (start + col.saturating_sub(1)).min(text.len())
}

/// A tensor's values as they are read: float32 (and the 16-bit floats, whose values are exact
/// in f32) at 4 bytes a number, everything else at 8.
enum Buf {
    F32(Vec<f32>),
    F64(Vec<f64>),
}

impl Buf {
    fn for_dtype(d: Option<DType>) -> Buf {
        match d {
            None | Some(DType::F32 | DType::BF16 | DType::F16) => Buf::F32(Vec::new()),
            Some(_) => Buf::F64(Vec::new()),
        }
    }

    fn len(&self) -> usize {
        match self {
            Buf::F32(v) => v.len(),
            Buf::F64(v) => v.len(),
        }
    }

    fn push(&mut self, x: f64) -> Result<(), String> {
        match self {
            Buf::F32(v) => {
                let y = x as f32;
                if y.is_infinite() {
                    return Err(format!("{x:e} is beyond the range of float32"));
                }
                v.push(y);
            }
            Buf::F64(v) => v.push(x),
        }
        Ok(())
    }

    fn elem_bytes(&self) -> u64 {
        match self {
            Buf::F32(_) => 4,
            Buf::F64(_) => 8,
        }
    }
}

/// State shared by the visitors of one feed: the memory limit, and which entry is being read
/// (for the position of an error).
struct Reader {
    limit: u64,
    used: Cell<u64>,
    over: Cell<bool>,
    /// (section, key) of the entry being read.
    at: RefCell<(&'static str, String)>,
    /// Set when a key was given twice: the error is then at the second one, where serde_json
    /// stands, not at the entry's first key.
    duplicate: Cell<bool>,
    /// The `inputs` entries read so far whose values held booleans.
    boolean_inputs: RefCell<Vec<String>>,
}

impl Reader {
    fn new(limit: u64) -> Reader {
        Reader {
            limit,
            used: Cell::new(0),
            over: Cell::new(false),
            at: RefCell::new(("", String::new())),
            duplicate: Cell::new(false),
            boolean_inputs: RefCell::new(Vec::new()),
        }
    }

    /// Refuses `key` if `seen` holds it already (a second value would silently replace the
    /// first: which one was meant?); `within` names the object (empty: the feed itself).
    fn first_time<E: de::Error>(
        &self,
        seen: &mut Vec<String>,
        key: &str,
        within: &str,
    ) -> Result<(), E> {
        if seen.iter().any(|k| k == key) {
            self.duplicate.set(true);
            let within = if within.is_empty() {
                String::new()
            } else {
                format!(" in `{within}`")
            };
            return Err(E::custom(format!(
                "`{key}` is given twice{within}: a feed names each key once"
            )));
        }
        seen.push(key.to_string());
        Ok(())
    }

    fn charge<E: de::Error>(&self, bytes: u64) -> Result<(), E> {
        let used = self.used.get().saturating_add(bytes);
        self.used.set(used);
        if used > self.limit {
            self.over.set(true);
            return Err(E::custom("over the memory limit"));
        }
        Ok(())
    }
}

/// The top-level object of a feed.
struct FeedSeed<'r>(&'r Reader);

impl<'de> DeserializeSeed<'de> for FeedSeed<'_> {
    type Value = Feed;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Feed, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for FeedSeed<'_> {
    type Value = Feed;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object with `inputs` and `state_init`")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Feed, A::Error> {
        let mut feed = Feed::default();
        let mut state_init = None;
        let mut state = None;
        let mut seen = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            self.0.first_time(&mut seen, &key, "")?;
            match key.as_str() {
                "inputs" => {
                    feed.inputs = map.next_value_seed(SectionSeed(self.0, "inputs"))?;
                    feed.has_inputs = true;
                }
                "state_init" => {
                    state_init = Some(map.next_value_seed(SectionSeed(self.0, "state_init"))?)
                }
                "state" => state = Some(map.next_value_seed(SectionSeed(self.0, "state"))?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        feed.state = state_init.or(state).unwrap_or_default();
        feed.boolean_inputs = self.0.boolean_inputs.take();
        Ok(feed)
    }
}

/// `inputs` or `state_init`: an object of tensors.
struct SectionSeed<'r>(&'r Reader, &'static str);

impl<'de> DeserializeSeed<'de> for SectionSeed<'_> {
    type Value = IndexMap<String, Tensor>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        *self.0.at.borrow_mut() = (self.1, String::new());
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for SectionSeed<'_> {
    type Value = IndexMap<String, Tensor>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = IndexMap::new();
        let mut seen = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            self.0.first_time(&mut seen, &key, self.1)?;
            *self.0.at.borrow_mut() = (self.1, key.clone());
            let t = map.next_value_seed(TensorSeed(self.0))?;
            out.insert(key, t);
        }
        *self.0.at.borrow_mut() = (self.1, String::new());
        Ok(out)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(de::Error::custom(NOT_OBJECT))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Err(E::custom(NOT_OBJECT))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Err(E::custom(NOT_OBJECT))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Err(E::custom(NOT_OBJECT))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Err(E::custom(NOT_OBJECT))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Err(E::custom(NOT_OBJECT))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Err(E::custom(NOT_OBJECT))
    }
}

const NOT_OBJECT: &str = "is not an object";

/// One tensor: a nested list of numbers (float32), or `{shape, dtype, values}`.
struct TensorSeed<'r>(&'r Reader);

impl<'de> DeserializeSeed<'de> for TensorSeed<'_> {
    type Value = Tensor;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Tensor, D::Error> {
        d.deserialize_any(self)
    }
}

/// A nested list read so far: its shape (dimension by depth), the depth of its numbers, its
/// values.
struct Nest {
    shape: Vec<usize>,
    /// Dimensions whose first list is still being read.
    open: Vec<bool>,
    leaf_depth: Option<usize>,
    buf: Buf,
    /// Whether a value was written `true` or `false` (read as 1 or 0): only a `bool` tensor
    /// may be.
    booleans: bool,
}

impl Nest {
    fn new(buf: Buf) -> Nest {
        Nest {
            shape: Vec::new(),
            open: Vec::new(),
            leaf_depth: None,
            buf,
            booleans: false,
        }
    }
}

fn tensor_of(shape: Vec<usize>, buf: Buf, dtype: DType) -> Result<Tensor, String> {
    let t = match buf {
        Buf::F32(v) => Tensor::new(shape, Data::F32(v)),
        Buf::F64(v) => match dtype {
            DType::F64 => Tensor::new(shape, Data::F64(v)),
            _ => {
                if let Some(x) = v.iter().find(|x| x.fract() != 0.0) {
                    return Err(format!(
                        "{x} is not an integer, but the dtype is {}",
                        dtype.attr_name()
                    ));
                }
                Tensor::new(shape, Data::I64(v.iter().map(|&x| x as i64).collect()))
            }
        },
    }
    .map_err(|e| e.message)?;
    Ok(if t.dtype() == dtype {
        t
    } else {
        cast(&t, dtype)
    })
}

impl<'de> Visitor<'de> for TensorSeed<'_> {
    type Value = Tensor;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a tensor")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Tensor, A::Error> {
        let mut nest = Nest::new(Buf::F32(Vec::new()));
        NestSeed(self.0, &mut nest, 0).visit_seq(seq)?;
        if nest.booleans {
            // An input takes its data op's dtype, which only the program knows: it is judged
            // there. Anything else written as a list is float32.
            let (section, key) = self.0.at.borrow().clone();
            if section != "inputs" {
                return Err(de::Error::custom(
                    "holds `true`/`false` in a float32 tensor: write numbers, or give `{\"shape\": ..., \"dtype\": \"bool\", \"values\": ...}`",
                ));
            }
            self.0.boolean_inputs.borrow_mut().push(key);
        }
        tensor_of(nest.shape, nest.buf, DType::F32).map_err(de::Error::custom)
    }
    fn visit_f64<E: de::Error>(self, x: f64) -> Result<Tensor, E> {
        let mut buf = Buf::F32(Vec::new());
        buf.push(x).map_err(E::custom)?;
        tensor_of(Vec::new(), buf, DType::F32).map_err(E::custom)
    }
    fn visit_i64<E: de::Error>(self, x: i64) -> Result<Tensor, E> {
        self.visit_f64(x as f64)
    }
    fn visit_u64<E: de::Error>(self, x: u64) -> Result<Tensor, E> {
        self.visit_f64(x as f64)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Tensor, E> {
        Err(E::custom("expected numbers or lists"))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Tensor, E> {
        Err(E::custom("expected numbers or lists"))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Tensor, E> {
        Err(E::custom("expected numbers or lists"))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tensor, A::Error> {
        let mut shape: Option<Vec<Value>> = None;
        let mut dtype: Option<String> = None;
        let mut values: Option<Nest> = None;
        let mut seen = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let within = match &*self.0.at.borrow() {
                ("", _) => String::new(),
                (section, entry) => format!("{section}.{entry}"),
            };
            self.0.first_time(&mut seen, &key, &within)?;
            match key.as_str() {
                "shape" => shape = Some(map.next_value()?),
                "dtype" => dtype = Some(map.next_value()?),
                "values" => {
                    let d = dtype.as_deref().and_then(crate::exec::dtype::parse);
                    let mut nest = Nest::new(Buf::for_dtype(d));
                    map.next_value_seed(NestSeed(self.0, &mut nest, 0))?;
                    values = Some(nest);
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let shape: Vec<usize> = shape
            .ok_or_else(|| de::Error::custom("missing `shape`"))?
            .iter()
            .map(|d| {
                d.as_u64()
                    .and_then(|d| usize::try_from(d).ok())
                    .ok_or_else(|| de::Error::custom("bad dimension"))
            })
            .collect::<Result<_, A::Error>>()?;
        let dtype_name = dtype.as_deref().unwrap_or("float32");
        let dtype = crate::exec::dtype::parse(dtype_name)
            .ok_or_else(|| de::Error::custom(format!("unknown dtype `{dtype_name}`")))?;
        let nest = values.ok_or_else(|| de::Error::custom("missing `values`"))?;
        if nest.booleans && dtype != DType::Bool {
            return Err(de::Error::custom(format!(
                "`values` hold `true`/`false`, but the dtype is {}: write numbers",
                dtype.attr_name()
            )));
        }
        let count = nest.buf.len();
        let want = shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .ok_or_else(|| {
                de::Error::custom("the shape has more elements than a 64-bit machine can count")
            })?;
        if nest.shape.len() > 1 && nest.shape != shape {
            return Err(de::Error::custom(format!(
                "`values` are nested as {:?}, but the shape is {:?}",
                nest.shape, shape
            )));
        }
        if count != want {
            return Err(de::Error::custom(format!(
                "shape {shape:?} needs {want} values, found {count}"
            )));
        }
        // Read before the dtype: 8-byte values, converted now.
        let buf = match (nest.buf, dtype) {
            (Buf::F64(v), DType::F32 | DType::BF16 | DType::F16) => {
                let mut b = Buf::F32(Vec::with_capacity(v.len()));
                for x in v {
                    b.push(x).map_err(de::Error::custom)?;
                }
                b
            }
            (Buf::F32(v), d) if !d.is_float() || d == DType::F64 => {
                Buf::F64(v.into_iter().map(f64::from).collect())
            }
            (b, _) => b,
        };
        tensor_of(shape, buf, dtype).map_err(de::Error::custom)
    }
}

/// A (nested) list at `depth` of a tensor's values, or one number of it.
struct NestSeed<'r, 'n>(&'r Reader, &'n mut Nest, usize);

impl<'de> DeserializeSeed<'de> for NestSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl NestSeed<'_, '_> {
    fn number<E: de::Error>(self, x: f64) -> Result<(), E> {
        let NestSeed(reader, nest, depth) = self;
        match nest.leaf_depth {
            None if nest.shape.len() == depth => nest.leaf_depth = Some(depth),
            Some(d) if d == depth => {}
            _ => return Err(E::custom("ragged nested list")),
        }
        reader.charge(nest.buf.elem_bytes())?;
        nest.buf.push(x).map_err(E::custom)
    }
}

impl<'de> Visitor<'de> for NestSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("numbers or lists")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let NestSeed(reader, nest, depth) = self;
        if nest.leaf_depth.is_some_and(|d| d <= depth) {
            return Err(de::Error::custom("ragged nested list"));
        }
        if depth > 64 {
            return Err(de::Error::custom("lists nested more than 64 deep"));
        }
        let first = nest.shape.len() == depth;
        if first {
            nest.shape.push(0);
            nest.open.push(true);
        }
        let mut count = 0usize;
        while seq
            .next_element_seed(NestSeed(reader, &mut *nest, depth + 1))?
            .is_some()
        {
            count += 1;
        }
        if nest.open.get(depth) == Some(&true) && first {
            nest.shape[depth] = count;
            nest.open[depth] = false;
        } else if nest.shape.get(depth) != Some(&count) {
            return Err(de::Error::custom("ragged nested list"));
        }
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, x: f64) -> Result<(), E> {
        self.number(x)
    }
    fn visit_i64<E: de::Error>(self, x: i64) -> Result<(), E> {
        self.number(x as f64)
    }
    fn visit_u64<E: de::Error>(self, x: u64) -> Result<(), E> {
        self.number(x as f64)
    }
    fn visit_bool<E: de::Error>(self, x: bool) -> Result<(), E> {
        self.1.booleans = true;
        self.number(f64::from(u8::from(x)))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Err(E::custom("expected numbers or lists"))
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Err(E::custom("expected numbers or lists"))
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(de::Error::custom("expected numbers or lists"))
    }
}

/// A tensor from `{shape, dtype, values}` or from a nested list (f32).
pub fn tensor_from_json(v: &Value) -> Result<Tensor, String> {
    let reader = Reader::new(u64::MAX);
    TensorSeed(&reader)
        .deserialize(v)
        .map_err(|e: serde_json::Error| e.to_string())
}

impl Feed {
    /// Parses a feed file (`inputs`, and `state_init` or `state`).
    pub fn parse(file: &str, text: &str) -> Result<Feed, Diagnostic> {
        Feed::parse_limited(file, text, u64::MAX)
    }

    /// [`Feed::parse`], refusing a feed whose tensors need more than `limit` bytes
    /// (`--max-memory`) as soon as it does.
    pub fn parse_limited(file: &str, text: &str, limit: u64) -> Result<Feed, Diagnostic> {
        let reader = Reader::new(limit);
        let mut de = serde_json::Deserializer::from_str(text);
        let parsed = FeedSeed(&reader)
            .deserialize(&mut de)
            .and_then(|f| de.end().map(|()| f));
        parsed.map_err(|e| {
            let (section, key) = reader.at.borrow().clone();
            let entry = match (section, key.as_str()) {
                ("", _) => String::new(),
                (s, "") => format!("`{s}`"),
                (s, k) => format!("`{s}.{k}`"),
            };
            if reader.over.get() {
                return bad(
                    file,
                    text,
                    entry_offset(text, section, &key),
                    format!(
                        "the feed's tensors need more than the memory limit of {limit} bytes (--max-memory), reached while reading {entry}"
                    ),
                )
                .with_hint("raise --max-memory, or feed fewer rows");
            }
            if reader.duplicate.get() {
                let msg = e.to_string();
                let msg = msg.rsplit_once(" at line ").map_or(msg.as_str(), |(m, _)| m);
                let quote = line_col_offset(text, e.line(), e.column());
                return bad(file, text, key_start(text, quote), msg);
            }
            if e.classify() == serde_json::error::Category::Data && !section.is_empty() {
                let msg = e.to_string();
                let msg = msg.rsplit_once(" at line ").map_or(msg.as_str(), |(m, _)| m);
                return bad(
                    file,
                    text,
                    entry_offset(text, section, &key),
                    format!("{entry}{}{msg}", if key.is_empty() { " " } else { ": " }),
                );
            }
            let at = line_col_offset(text, e.line(), e.column());
            let msg = e.to_string();
            // The position is the diagnostic's; drop serde's " at line L column C".
            let msg = msg
                .rsplit_once(" at line ")
                .map_or(msg.as_str(), |(m, _)| m);
            let what = if e.classify() == serde_json::error::Category::Data {
                "a feed is a JSON object with `inputs` and `state_init`"
            } else {
                "invalid JSON"
            };
            bad(file, text, at, format!("{what}: {msg}"))
        })
    }

    /// Number of rows of the fed batch (the first input's first dimension).
    pub fn batch_rows(&self) -> Option<usize> {
        self.inputs
            .values()
            .next()
            .and_then(|t| t.shape().first().copied())
    }

    /// Checks the feed against the program that will read it (`src`: the feed's own text, for
    /// positions): the inputs it reads are fed (at the data op), nothing else is (at the feed's
    /// key), every input has the same rows, and each `state_init` entry names a persistable of
    /// the program with its declared dtype and shape.
    pub fn validate(
        &self,
        module: &Module,
        sources: Sources<'_>,
        src: &SourceFile,
    ) -> Result<(), Diagnostic> {
        let (ctx, prog) = (&module.ctx, &module.main);
        let data = fed_inputs(ctx, prog);
        let at_key = |section: &str, key: &str, msg: String| {
            Diagnostic::at(src, entry_offset(&src.text, section, key), msg)
        };
        let data_note =
            |d: &DataOp| match at_data_op(sources.main, prog, d.op, String::new()).location {
                Some(l) => format!(
                    "`{}` is read by the `pd_op.data` at {}:{}:{}",
                    d.name, l.file, l.line, l.col
                ),
                None => format!("`{}` is read by a `pd_op.data` of the program", d.name),
            };
        if !self.has_inputs {
            if let Some(d) = data.first() {
                return Err(at_data_op(
                    sources.main,
                    prog,
                    d.op,
                    format!(
                        "the feed {} has no `inputs`, but this `pd_op.data` reads `{}`",
                        src.name, d.name
                    ),
                )
                .with_hint(
                    "add `\"inputs\": {...}` to the feed; without --feed, irw generates the inputs",
                ));
            }
        }
        for d in &data {
            if self.has_inputs && !self.inputs.contains_key(&d.name) {
                return Err(at_data_op(
                    sources.main,
                    prog,
                    d.op,
                    format!(
                        "no input fed for `{}`: the feed {} has no `inputs.{}`",
                        d.name, src.name, d.name
                    ),
                ));
            }
        }
        for name in &self.boolean_inputs {
            let Some(d) = data.iter().find(|d| &d.name == name) else {
                continue; // an input the program does not read: refused below
            };
            if d.dtype != DType::Bool {
                return Err(at_key(
                    "inputs",
                    name,
                    format!(
                        "`inputs.{name}` holds `true`/`false`, but the program reads `{name}` as {}: write numbers",
                        d.dtype.attr_name()
                    ),
                )
                .with_note(data_note(d)));
            }
        }
        let mut first: Option<(&str, usize)> = None;
        for (name, t) in &self.inputs {
            let Some(d) = data.iter().find(|d| &d.name == name) else {
                let read: Vec<&str> = data.iter().map(|d| d.name.as_str()).collect();
                return Err(at_key(
                    "inputs",
                    name,
                    format!("`inputs.{name}`: the program reads no input `{name}`"),
                )
                .with_hint(if read.is_empty() {
                    "the program has no fed `pd_op.data`".to_string()
                } else {
                    format!("the program reads {}", read.join(", "))
                }));
            };
            // Paddle refuses a fed tensor of another kind than its `data` op reads (integers
            // for a float input: "The data type of fed Variable must be float32"); irw would
            // convert it.
            if d.dtype.is_float() && !t.dtype().is_float() && t.dtype() != DType::Bool {
                return Err(at_key(
                    "inputs",
                    name,
                    format!(
                        "`inputs.{name}` is {}, but the program reads `{name}` as {}: Paddle refuses a feed of another dtype",
                        t.dtype().attr_name(),
                        d.dtype.attr_name()
                    ),
                )
                .with_note(data_note(d))
                .with_hint(format!(
                    "give `\"dtype\": \"{}\"`, or leave `dtype` out (numbers are then read as the input's dtype)",
                    d.dtype.attr_name()
                )));
            }
            // An id fed as a fraction would be truncated where Paddle refuses the feed.
            if !d.dtype.is_float() && d.dtype != DType::Bool && t.dtype().is_float() {
                if let Some(x) = t.to_f64_vec().into_iter().find(|x| x.fract() != 0.0) {
                    return Err(at_key(
                        "inputs",
                        name,
                        format!(
                            "`inputs.{name}` holds {x}, but the program reads `{name}` as {}: write whole numbers",
                            d.dtype.attr_name()
                        ),
                    )
                    .with_note(data_note(d)));
                }
            }
            let rows = t.shape().first().copied().unwrap_or(1);
            match first {
                None => first = Some((name, rows)),
                Some((f, r)) if r != rows => {
                    return Err(at_key(
                        "inputs",
                        name,
                        format!(
                            "`inputs.{name}` has {rows} rows, but `inputs.{f}` has {r}: every input of a step has the same rows"
                        ),
                    )
                    .with_note(data_note(d)));
                }
                Some(_) => {}
            }
        }
        let declared = declared_persistables(module);
        for (name, t) in &self.state {
            let Some(decl) = declared.get(name.as_str()) else {
                let close =
                    crate::rules::suggest::closest(name, declared.keys().map(String::as_str), 3);
                let hint = crate::rules::suggest::did_you_mean(&close);
                let d = at_key(
                    key_section(&src.text),
                    name,
                    format!("`state_init.{name}`: the program has no persistable `{name}`"),
                );
                return Err(match hint {
                    Some(h) => d.with_hint(h),
                    None => d,
                });
            };
            if let Err(why) = decl.admits(t) {
                return Err(at_key(
                    key_section(&src.text),
                    name,
                    format!("`state_init.{name}` {why}"),
                )
                .with_note(decl.where_declared(module, sources)));
            }
        }
        Ok(())
    }
}

/// Which key holds a feed's state (`state_init`, else a dump's `state`).
fn key_section(text: &str) -> &'static str {
    if text.contains("\"state_init\"") {
        "state_init"
    } else {
        "state"
    }
}

/// A persistable the program declares: the type of the value that names it, and where.
struct Declared {
    shape: Vec<i64>,
    dtype: DType,
    dist: bool,
    /// The op that declares it, and whether it is in the startup program; `None` for a
    /// keyword argument.
    op: Option<(bool, OpId)>,
    text: String,
}

impl Declared {
    /// Whether `t` may initialize it: the declared dtype, and every fixed dimension (a
    /// distributed type declares the global shape, which a rank's shard need not have: only its
    /// dtype is compared).
    fn admits(&self, t: &Tensor) -> Result<(), String> {
        let have = {
            let dims: String = t.shape().iter().map(|d| format!("{d}x")).collect();
            format!("tensor<{dims}{}>", t.dtype().short_name())
        };
        if crate::exec::dtype::computable(self.dtype) && self.dtype != t.dtype() {
            return Err(format!(
                "is {have}, but the program declares {}: the dtypes differ",
                self.text
            ));
        }
        if self.dist {
            return Ok(());
        }
        let fits = t.shape().len() == self.shape.len()
            && self
                .shape
                .iter()
                .zip(t.shape())
                .all(|(&w, &g)| w < 0 || usize::try_from(w).is_ok_and(|w| w == g));
        if !fits {
            return Err(format!(
                "is {have}, but the program declares {}: the shapes differ",
                self.text
            ));
        }
        Ok(())
    }

    /// "declared at FILE:LINE:COL" (or the type, where the position is unknown).
    fn where_declared(&self, module: &Module, sources: Sources<'_>) -> String {
        let at = self.op.and_then(|(startup, op)| {
            let (src, prog) = if startup {
                (sources.startup, module.startup.as_ref()?)
            } else {
                (sources.main, &module.main)
            };
            let src = src?;
            let (l, c) = src.line_col(prog.position(op)?);
            Some(format!("{}:{l}:{c}", src.name))
        });
        match at {
            Some(at) => format!("declared as {} at {at}", self.text),
            None if self.op.is_none() => {
                format!("declared as {} (a keyword argument of main)", self.text)
            }
            None => format!("declared as {}", self.text),
        }
    }
}

/// Every persistable the module names, with its declared type: main's parameters, persistable
/// data ops and keyword arguments first, then what the startup program publishes.
fn declared_persistables(module: &Module) -> IndexMap<String, Declared> {
    use crate::dialect::protocol::{scope_reader_name_attr, scope_writer_name_attr};
    let ctx = &module.ctx;
    let mut out: IndexMap<String, Declared> = IndexMap::new();
    let mut add = |name: String, ty: crate::ir::TypeId, op: Option<(bool, OpId)>| {
        let (shape, dtype, dist) = match ctx.ty(ty) {
            crate::ir::Type::Tensor { shape, dtype } => (shape.clone(), *dtype, false),
            crate::ir::Type::Dist { shape, dtype, .. } => (shape.clone(), *dtype, true),
            _ => return,
        };
        let text = ctx.type_text(ty).to_string();
        out.entry(name).or_insert(Declared {
            shape,
            dtype,
            dist,
            op,
            text,
        });
    };
    let progs =
        std::iter::once((false, &module.main)).chain(module.startup.iter().map(|p| (true, p)));
    for (startup, prog) in progs {
        if !startup {
            for kw in prog.block_kwargs(prog.top_block()) {
                add(
                    ctx.str(kw.name).to_string(),
                    prog.value_type(kw.value),
                    None,
                );
            }
        }
        for op in prog.block_ops(prog.top_block()) {
            let name = ctx.str(prog.op_name(op));
            let attrs = ctx.attrs(prog.op_attrs(op));
            let (key, value) = if let Some(key) = scope_writer_name_attr(name) {
                (key, prog.operands(op).next().flatten())
            } else if let Some(key) = scope_reader_name_attr(name) {
                if name == "pd_op.data" {
                    let persistable = matches!(attrs.get("persistable"), Some(Attr::Array(v)) if v.first().and_then(|b| b.as_bool()) == Some(true));
                    if !persistable {
                        continue;
                    }
                }
                (key, prog.results(op).next())
            } else {
                continue;
            };
            let (Some(var), Some(v)) = (attrs.get(key).and_then(|a| a.as_str()), value) else {
                continue;
            };
            add(var.into_owned(), prog.value_type(v), Some((startup, op)));
        }
    }
    out
}

/// The non-persistable `pd_op.data` ops of a program (the inputs fed per step).
pub struct DataOp {
    pub name: String,
    /// The declared shape (`-1`: dynamic).
    pub shape: Vec<i64>,
    pub dtype: DType,
    pub op: OpId,
    /// The fixed batch B of one rank, when the first dimension is fixed: the declared rows, or
    /// the declared global rows over the mesh dimension that shards them.
    pub batch: Option<usize>,
}

/// A diagnostic at the data op `op` of `prog` (read from `src`), when its position is known.
pub fn at_data_op(src: Option<&SourceFile>, prog: &Program, op: OpId, msg: String) -> Diagnostic {
    Diagnostic::at_if_known(src, prog.position(op), msg)
}

/// The non-persistable `pd_op.data` ops of a program.
pub fn fed_inputs(ctx: &Context, prog: &Program) -> Vec<DataOp> {
    let mut out = Vec::new();
    for op in prog.block_ops(prog.top_block()) {
        if ctx.str(prog.op_name(op)) != "pd_op.data" {
            continue;
        }
        let a = ctx.attrs(prog.op_attrs(op));
        let persistable = matches!(a.get("persistable"), Some(Attr::Array(v)) if v.first().and_then(|b| b.as_bool()) == Some(true));
        if persistable {
            continue;
        }
        let Some(name) = a.get("name").and_then(|n| n.as_str()) else {
            continue;
        };
        let shape: Vec<i64> = a
            .get("shape")
            .and_then(|s| s.as_array())
            .map(|s| s.iter().filter_map(|d| d.as_i64()).collect())
            .unwrap_or_default();
        let dtype = a
            .get("dtype")
            .and_then(|d| d.as_word())
            .and_then(crate::exec::dtype::parse)
            .unwrap_or(DType::F32);
        let shards = prog
            .results(op)
            .next()
            .and_then(|v| ctx.ty(prog.value_type(v)).dist())
            .and_then(|d| {
                let m = *d.dims_mapping.first()?;
                usize::try_from(m)
                    .ok()
                    .and_then(|m| d.mesh_shape.get(m).copied())
            })
            .and_then(|s| usize::try_from(s).ok())
            .filter(|&s| s > 0)
            .unwrap_or(1);
        let batch = shape
            .first()
            .and_then(|&d| usize::try_from(d).ok())
            .filter(|&d| d > 0)
            .map(|d| (d / shards).max(1));
        out.push(DataOp {
            name: name.into_owned(),
            shape,
            dtype,
            op,
            batch,
        });
    }
    out
}

/// A seeded batch of `rows` rows for every fed input (the first dimension, fixed or `-1`,
/// becomes `rows`: a fixed batch B accepts any multiple of B, and the caller makes `rows` one):
/// standard normal floats; integers uniform in [0, 2) (class labels of a two-class toy
/// problem). A float input named `mask` (or ending in `_mask`) is a padding mask: 0/1 values,
/// the first element of every row 1 and each other 1 with probability 1/2, so a micro-batch of
/// any size holds at least one real token per row (its count is never zero) and micro-batches
/// hold different counts — what a token-mean loss `sum(l·mask)/sum(mask)` needs to tell a merge
/// normalized by the window's token count from one by a constant 1/k. `src` is the program's
/// file, for errors at a data op.
pub fn generate_batch(
    ctx: &Context,
    prog: &Program,
    src: Option<&SourceFile>,
    rows: usize,
    seed: u64,
) -> Result<IndexMap<String, Tensor>, Diagnostic> {
    let mut rng = Rng::new(seed ^ 0x5EED_F00D);
    let mut out = IndexMap::new();
    for d in fed_inputs(ctx, prog) {
        let name = &d.name;
        let dims: Vec<usize> = d
            .shape
            .iter()
            .enumerate()
            .map(|(i, &n)| match n {
                _ if i == 0 => Ok(rows),
                n if n >= 0 => Ok(n as usize),
                _ => Err(at_data_op(
                    src,
                    prog,
                    d.op,
                    format!("input `{name}` has a dynamic dimension other than the batch"),
                )
                .with_hint("irw generates inputs only for a known shape: give them with --feed")),
            })
            .collect::<Result<_, _>>()?;
        let elem = if d.dtype.is_float() { 4 } else { 8 };
        crate::exec::memory::reserve(
            &format_args!("`pd_op.data` input `{name}` (a generated batch of {rows} rows)"),
            &dims,
            elem,
        )
        .map_err(|e| {
            let e = e.into_diagnostic("");
            match at_data_op(src, prog, d.op, e.message.clone()).location {
                Some(l) => Diagnostic {
                    location: Some(l),
                    ..e
                },
                None => e,
            }
        })?;
        let n = numel(&dims);
        let t = if d.dtype.is_float() && is_mask_name(name) {
            let row = n / rows.max(1);
            let values = (0..n)
                .map(|i| {
                    if row == 0 || i % row == 0 || rng.below(2) == 1 {
                        1.0
                    } else {
                        0.0
                    }
                })
                .collect();
            Tensor::new(dims, Data::F32(values))
        } else if d.dtype.is_float() {
            Tensor::new(dims, Data::F32(rng.normal_vec(n)))
        } else {
            Tensor::new(
                dims,
                Data::I64((0..n).map(|_| rng.below(2) as i64).collect()),
            )
        };
        let t = t.map_err(|e| Diagnostic::error(e.message))?;
        out.insert(d.name.clone(), cast(&t, d.dtype));
    }
    Ok(out)
}

/// Whether a generated float input is a padding mask ([`generate_batch`]).
fn is_mask_name(name: &str) -> bool {
    name == "mask" || name.ends_with("_mask")
}

/// Rows `[start, start + len)` of every tensor (along dimension 0).
pub fn slice_rows(
    batch: &IndexMap<String, Tensor>,
    start: usize,
    len: usize,
) -> Result<IndexMap<String, Tensor>, Diagnostic> {
    let mut out = IndexMap::new();
    for (name, t) in batch {
        let rows = t.shape().first().copied().unwrap_or(1);
        if start + len > rows {
            return Err(Diagnostic::error(format!(
                "input `{name}` has {rows} rows; rows {start}..{} were requested",
                start + len
            )));
        }
        let row = t.numel() / rows.max(1);
        let mut shape = t.shape().to_vec();
        if !shape.is_empty() {
            shape[0] = len;
        }
        let (a, b) = (start * row, (start + len) * row);
        let data = t.data().range(a, b);
        out.insert(
            name.clone(),
            Tensor::new(shape, data).map_err(|e| Diagnostic::error(e.message))?,
        );
    }
    Ok(out)
}

/// What `irw run --dump` writes: `{"loss": [[per rank] per step], "state": {name: tensor}}`,
/// the layout of [`scope_to_json`] and [`tensor_to_json`], byte for byte, but serialized as it
/// is written: a tree of the whole state would take about 17× the state's bytes, outside the
/// executor's memory limit, while this reads each value from its tensor as it is printed.
pub struct Dump<'a> {
    pub loss: &'a [Vec<Option<f32>>],
    pub state: &'a Scope,
}

impl Dump<'_> {
    /// Writes the dump, pretty-printed, with a final newline; returns the bytes written.
    pub fn write_to(&self, w: &mut dyn std::io::Write) -> std::io::Result<u64> {
        let mut out = Counted {
            w: std::io::BufWriter::with_capacity(1 << 20, w),
            n: 0,
        };
        serde_json::to_writer_pretty(&mut out, self)?;
        std::io::Write::write_all(&mut out, b"\n")?;
        std::io::Write::flush(&mut out)?;
        Ok(out.n)
    }
}

/// A writer that counts the bytes it passes on.
struct Counted<W> {
    w: W,
    n: u64,
}

impl<W: std::io::Write> std::io::Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.w.write(buf)?;
        self.n += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.w.flush()
    }
}

impl serde::Serialize for Dump<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        // Losses as `json!` holds an f32: widened to f64 (`0.1` prints as 0.10000000149011612).
        let loss: Vec<Vec<Option<f64>>> = self
            .loss
            .iter()
            .map(|step| step.iter().map(|l| l.map(f64::from)).collect())
            .collect();
        let mut names: Vec<(&str, &Tensor)> = self.state.iter().collect();
        names.sort_by(|a, b| a.0.cmp(b.0));
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("loss", &loss)?;
        m.serialize_entry("state", &StateJson(&names))?;
        m.end()
    }
}

struct StateJson<'a>(&'a [(&'a str, &'a Tensor)]);

impl serde::Serialize for StateJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|&(k, t)| (k, TensorJson(t))))
    }
}

/// [`tensor_to_json`]'s `{dtype, shape, values}`, values read one at a time.
struct TensorJson<'a>(&'a Tensor);

impl serde::Serialize for TensorJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let t = self.0;
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("dtype", t.dtype().attr_name())?;
        m.serialize_entry("shape", t.shape())?;
        m.serialize_entry("values", &ValuesJson(t))?;
        m.end()
    }
}

struct ValuesJson<'a>(&'a Tensor);

impl serde::Serialize for ValuesJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.data() {
            Data::I64(v) => s.collect_seq(v.iter()),
            Data::I32(v) => s.collect_seq(v.iter()),
            Data::Bool(v) => s.collect_seq(v.iter()),
            Data::U8(v) => s.collect_seq(v.iter()),
            Data::F32(v) => s.collect_seq(v.iter().map(|&x| f64::from(x))),
            Data::BF16(v) => s.collect_seq(v.iter().map(|x| x.to_f64())),
            Data::F16(v) => s.collect_seq(v.iter().map(|x| x.to_f64())),
            Data::F64(v) => s.collect_seq(v.iter()),
        }
    }
}

#[cfg(test)]
use serde_json::{json, Map};

/// A tensor as `{shape, dtype, values}` (values widened to f64, exact).
#[cfg(test)]
fn tensor_to_json(t: &Tensor) -> Value {
    let values: Vec<Value> = match t.data() {
        Data::I64(v) => v.iter().map(|&x| json!(x)).collect(),
        Data::I32(v) => v.iter().map(|&x| json!(x)).collect(),
        Data::Bool(v) => v.iter().map(|&x| json!(x)).collect(),
        Data::U8(v) => v.iter().map(|&x| json!(x)).collect(),
        _ => t.to_f64_vec().into_iter().map(|x| json!(x)).collect(),
    };
    json!({ "shape": t.shape(), "dtype": t.dtype().attr_name(), "values": values })
}

/// A scope as a JSON object of tensors (keys sorted, as a `serde_json` map holds them).
#[cfg(test)]
fn scope_to_json(scope: &Scope) -> Value {
    let mut m = Map::new();
    for (k, t) in scope.iter() {
        m.insert(k.to_string(), tensor_to_json(t));
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_streamed_dump_is_the_tree_dump_byte_for_byte() {
        let mut scope = Scope::default();
        let f = Feed::parse(
            "t.json",
            r#"{"state_init": {"w": {"shape": [2], "dtype": "bfloat16", "values": [0.10009765625, 1.0]},
                               "a": {"shape": [3], "dtype": "float32", "values": [0.1, -2.5, 3e-9]},
                               "n": {"shape": [1], "dtype": "int64", "values": [7]}}}"#,
        )
        .unwrap();
        for (k, t) in &f.state {
            scope.set(k, t.clone());
        }
        let loss = vec![vec![Some(0.1f32), None], vec![Some(2.0), Some(-1.5)]];
        let mut tree = Map::new();
        tree.insert("state".into(), scope_to_json(&scope));
        tree.insert("loss".into(), json!(loss));
        let want = serde_json::to_string_pretty(&Value::Object(tree)).unwrap() + "\n";
        let mut got = Vec::new();
        let n = Dump {
            loss: &loss,
            state: &scope,
        }
        .write_to(&mut got)
        .unwrap();
        assert_eq!(String::from_utf8(got).unwrap(), want);
        assert_eq!(n as usize, want.len());
    }

    #[test]
    fn parses_both_tensor_forms_exactly() {
        let text = r#"{"inputs": {"x": [[1.5, 2.0], [0.10000000149011612, -1]]},
                       "state_init": {"w": {"shape": [2], "dtype": "bfloat16", "values": [0.10009765625, 1.0]}}}"#;
        let f = Feed::parse("t.json", text).unwrap();
        let x = &f.inputs["x"];
        assert_eq!(x.shape(), &[2, 2]);
        assert_eq!(x.as_f32().unwrap()[2], 0.1f32);
        assert_eq!(f.state["w"].dtype(), DType::BF16);
        assert_eq!(f.state["w"].to_f64_vec(), vec![0.10009765625, 1.0]);
        assert_eq!(f.batch_rows(), Some(2));
        let back = tensor_from_json(&tensor_to_json(&f.state["w"])).unwrap();
        assert_eq!(back, f.state["w"]);
        assert!(Feed::parse("t.json", r#"{"inputs": {"x": [[1], [2, 3]]}}"#).is_err());
        let rows = slice_rows(&f.inputs, 1, 1).unwrap();
        assert_eq!(rows["x"].as_f32().unwrap(), &[0.1, -1.0]);
        assert!(slice_rows(&f.inputs, 1, 2).is_err());
    }

    #[test]
    fn errors_point_at_the_key_or_the_syntax_error() {
        // `"x"` also occurs in `state_init` before `inputs`: the key under `inputs` is meant.
        let text =
            "{\"state_init\": {\"x\": [1]},\n \"inputs\": {\"y\": [1],\n   \"x\": [[1], [2, 3]]}}";
        let d = Feed::parse("t.json", text).unwrap_err().to_string();
        assert!(
            d.starts_with("t.json:3:4: error: `inputs.x`: ragged nested list"),
            "{d}"
        );
        let d = Feed::parse("t.json", "{\n  \"inputs\": {,}}")
            .unwrap_err()
            .to_string();
        assert!(
            d.starts_with("t.json:2:14: error: invalid JSON: key must be a string"),
            "{d}"
        );
    }
}
