//! Interned attribute dictionaries, stored as pairs of small indices.
//!
//! Why: most ops of a training program share a few dozen dictionaries, but every parameter,
//! data op and named output has its own (its name is an attribute), so a program of 10^6 ops
//! holds a few hundred thousand distinct dictionaries. Stored whole, with their printed text,
//! they cost about a kilobyte each and were the largest part of the IR. Here each distinct
//! attribute *value* is stored once (`[false]` once per program, a parameter's name once), and a dictionary is a boxed slice of `(key, value)` index pairs, 8
//! bytes an entry: two dictionaries that differ only in a name share everything but that name.
//!
//! Readers see a dictionary through [`Attrs`], a copyable view with the lookups of
//! [`AttrDict`]; code that edits a dictionary takes an owned copy ([`Attrs::to_dict`]), edits
//! it and interns the result. The view also wraps an owned [`AttrDict`], so a function that
//! reads attributes works on both (kernels are tested on hand-made dictionaries).

use super::attr::{intern_key, write_dict, Attr, AttrDict, AttrKey};
use hashbrown::HashTable;
use rustc_hash::{FxHashMap, FxHasher};
use std::hash::{Hash, Hasher};

/// One entry of a stored dictionary: indices into the store's keys and values.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Entry {
    key: u32,
    value: u32,
}

/// Every attribute key, value and dictionary of a [`Context`](super::Context).
///
/// Values and dictionaries are deduplicated through hash tables that hold their `u32` ids with
/// half their hash ([`Slot`]), and the entries of all dictionaries lie back to back in one
/// vector: a distinct dictionary costs its entries, 8 bytes of span and about 9 bytes of table.
#[derive(Clone, Default)]
pub struct AttrStore {
    keys: Vec<AttrKey>,
    key_index: FxHashMap<AttrKey, u32>,
    values: Vec<Attr>,
    value_index: HashTable<Slot>,
    /// The entries of every dictionary; dictionary `i` is `entries[spans[i]]`.
    entries: Vec<Entry>,
    spans: Vec<(u32, u32)>,
    dict_index: HashTable<Slot>,
    /// Scratch for [`AttrStore::intern`]: the entries of the dictionary being interned.
    scratch: Vec<Entry>,
}

impl std::fmt::Debug for AttrStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AttrStore")
            .field("values", &self.values.len())
            .field("dicts", &self.spans.len())
            .finish()
    }
}

/// The entries of dictionary `id` (a function of the two fields rather than a method, so that
/// the hash table's closures can borrow them while the table itself is borrowed mutably).
fn dict_entries<'e>(entries: &'e [Entry], spans: &[(u32, u32)], id: u32) -> &'e [Entry] {
    let (start, len) = spans[id as usize];
    &entries[start as usize..(start + len) as usize]
}

fn fx_hash<T: Hash + ?Sized>(t: &T) -> u64 {
    let mut h = FxHasher::default();
    t.hash(&mut h);
    h.finish()
}

/// An entry of the store's hash tables: an id and the high half of its value's or dictionary's
/// hash. Growing a table then moves its slots without hashing what they name again, which
/// would read each value or dictionary, at random, from vectors of millions (a program's
/// tables grow while it is parsed and again while rules intern new names); and a probe
/// compares the hash before it reads anything.
#[derive(Copy, Clone)]
struct Slot {
    id: u32,
    hash: u32,
}

impl Slot {
    /// The part of `hash` a slot keeps.
    fn half(hash: u64) -> u32 {
        (hash >> 32) as u32
    }

    /// The hash the table places a slot by: the kept half in both halves, so that the table's
    /// bucket (low bits) and tag (top bits) both come from it.
    fn table_hash(half: u32) -> u64 {
        (u64::from(half) << 32) | u64::from(half)
    }
}

impl AttrStore {
    /// The index of `dict`, adding it (and its new keys and values) if it is new.
    pub fn intern(&mut self, dict: AttrDict) -> u32 {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        for (key, value) in dict.entries {
            let key = self.key(key);
            let value = self.value(fx_hash(&value), value);
            scratch.push(Entry { key, value });
        }
        let id = self.intern_entries(&scratch);
        self.scratch = scratch;
        id
    }

    /// Interns dictionary `i` of `local`, a dictionary built on another thread; `ids` is the
    /// store's ids of `local`'s keys, values and pairs found so far (one per `local`, fresh
    /// when `local` is: see [`LocalIds::reset`]). Each value of `local` is moved into the store
    /// the first time a dictionary uses it.
    pub fn intern_local(&mut self, local: &mut LocalDicts, ids: &mut LocalIds, i: usize) -> u32 {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        let (start, len) = local.spans[i];
        for &p in &local.dict_pairs[start as usize..(start + len) as usize] {
            let entry = match ids.pairs[p as usize] {
                Some(e) => e,
                None => {
                    let (k, v) = local.pairs[p as usize];
                    let key = match ids.keys[k as usize] {
                        UNSEEN => {
                            let key = self.key(local.keys[k as usize]);
                            ids.keys[k as usize] = key;
                            key
                        }
                        key => key,
                    };
                    let value = match ids.values[v as usize] {
                        UNSEEN => {
                            let (hash, attr) =
                                std::mem::replace(&mut local.values[v as usize], MOVED);
                            let value = self.value(hash, attr);
                            ids.values[v as usize] = value;
                            value
                        }
                        value => value,
                    };
                    let e = Entry { key, value };
                    ids.pairs[p as usize] = Some(e);
                    e
                }
            };
            scratch.push(entry);
        }
        let id = self.intern_entries(&scratch);
        self.scratch = scratch;
        id
    }

    /// The index of the dictionary with these entries, adding it if it is new.
    fn intern_entries(&mut self, entries: &[Entry]) -> u32 {
        let half = Slot::half(fx_hash(entries));
        let (stored, spans) = (&self.entries, &self.spans);
        if let Some(slot) = self.dict_index.find(Slot::table_hash(half), |s| {
            s.hash == half && dict_entries(stored, spans, s.id) == entries
        }) {
            return slot.id;
        }
        let id = u32::try_from(self.spans.len()).expect("fewer than 2^32 dictionaries");
        let start = u32::try_from(self.entries.len()).expect("fewer than 2^32 attribute entries");
        self.entries.extend_from_slice(entries);
        self.spans.push((start, entries.len() as u32));
        self.dict_index
            .insert_unique(Slot::table_hash(half), Slot { id, hash: half }, |s| {
                Slot::table_hash(s.hash)
            });
        id
    }

    fn key(&mut self, key: AttrKey) -> u32 {
        if let Some(&k) = self.key_index.get(key) {
            return k;
        }
        let k = self.keys.len() as u32;
        self.keys.push(key);
        self.key_index.insert(key, k);
        k
    }

    /// The index of `value`, whose hash is `hash`, adding it if it is new.
    fn value(&mut self, hash: u64, value: Attr) -> u32 {
        let half = Slot::half(hash);
        let values = &self.values;
        if let Some(slot) = self.value_index.find(Slot::table_hash(half), |s| {
            s.hash == half && values[s.id as usize] == value
        }) {
            return slot.id;
        }
        let id = u32::try_from(self.values.len()).expect("fewer than 2^32 attribute values");
        self.values.push(value);
        self.value_index
            .insert_unique(Slot::table_hash(half), Slot { id, hash: half }, |s| {
                Slot::table_hash(s.hash)
            });
        id
    }

    /// The dictionary with index `id`.
    pub fn get(&self, id: u32) -> Attrs<'_> {
        Attrs::Stored {
            store: self,
            entries: dict_entries(&self.entries, &self.spans, id),
        }
    }

    /// Number of distinct dictionaries.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    fn entry(&self, e: Entry) -> (&str, &Attr) {
        (self.keys[e.key as usize], &self.values[e.value as usize])
    }
}

/// Attribute dictionaries built away from a store, on a parser's worker thread, for the
/// store's thread to intern later ([`AttrStore::intern_local`]).
///
/// Why: interning hashes every value of every dictionary, and the store has one owner. Built
/// here, each distinct `key: value` pair of a chunk of op lines is made and its value hashed
/// once, on the worker; the owner then pays one probe per distinct pair and one per
/// dictionary, which keeps the single-threaded part of parsing small.
#[derive(Default)]
pub struct LocalDicts {
    keys: Vec<AttrKey>,
    /// Local index of each key, by the address of its name: names from [`intern_key`] share
    /// one address, and a name with another address is only a second local key for the same
    /// store key (the store finds keys by their text).
    key_index: FxHashMap<usize, u32>,
    /// Each value with its hash; moved out by [`AttrStore::intern_local`].
    values: Vec<(u64, Attr)>,
    /// `(local key, local value)`.
    pairs: Vec<(u32, u32)>,
    /// The pairs of every dictionary; dictionary `i` is `dict_pairs[spans[i]]`.
    dict_pairs: Vec<u32>,
    spans: Vec<(u32, u32)>,
}

impl LocalDicts {
    /// A new pair `key: value`; its index.
    pub fn pair(&mut self, key: AttrKey, value: Attr) -> u32 {
        let next = self.keys.len() as u32;
        let k = *self.key_index.entry(key.as_ptr() as usize).or_insert(next);
        if k == next {
            self.keys.push(key);
        }
        let v = self.values.len() as u32;
        self.values.push((fx_hash(&value), value));
        self.pairs.push((k, v));
        self.pairs.len() as u32 - 1
    }

    /// The key of pair `p`.
    pub fn pair_key(&self, p: u32) -> AttrKey {
        self.keys[self.pairs[p as usize].0 as usize]
    }

    /// A new dictionary of these pairs, in order; its index.
    pub fn dict(&mut self, pairs: &[u32]) -> u32 {
        let start = self.dict_pairs.len() as u32;
        self.dict_pairs.extend_from_slice(pairs);
        self.spans.push((start, pairs.len() as u32));
        self.spans.len() as u32 - 1
    }

    /// `dict` as a new dictionary (every entry a new pair); its index.
    pub fn dict_of(&mut self, dict: AttrDict) -> u32 {
        let pairs: Vec<u32> = dict
            .entries
            .into_iter()
            .map(|(k, v)| self.pair(k, v))
            .collect();
        self.dict(&pairs)
    }

    /// Number of dictionaries.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
}

/// What a [`LocalDicts`] value leaves behind when it moves into the store.
const MOVED: (u64, Attr) = (0, Attr::Bool(false));

/// A key, value or pair of a [`LocalDicts`] not yet found in the store.
const UNSEEN: u32 = u32::MAX;

/// The store's ids of a [`LocalDicts`]' keys, values and pairs, as far as they have been
/// interned.
#[derive(Default)]
pub struct LocalIds {
    keys: Vec<u32>,
    values: Vec<u32>,
    pairs: Vec<Option<Entry>>,
}

impl LocalIds {
    /// Forgets every id, sized for `local`.
    pub fn reset(&mut self, local: &LocalDicts) {
        self.keys.clear();
        self.keys.resize(local.keys.len(), UNSEEN);
        self.values.clear();
        self.values.resize(local.values.len(), UNSEEN);
        self.pairs.clear();
        self.pairs.resize(local.pairs.len(), None);
    }
}

/// A read-only view of an attribute dictionary: an interned one ([`Context::attrs`]) or an
/// owned [`AttrDict`] (`Attrs::from(&dict)`).
///
/// [`Context::attrs`]: super::Context::attrs
#[derive(Copy, Clone, Debug)]
pub enum Attrs<'a> {
    Stored {
        store: &'a AttrStore,
        entries: &'a [Entry],
    },
    Dict(&'a AttrDict),
}

impl<'a> From<&'a AttrDict> for Attrs<'a> {
    fn from(d: &'a AttrDict) -> Self {
        Attrs::Dict(d)
    }
}

impl<'a> Attrs<'a> {
    pub fn get(self, key: &str) -> Option<&'a Attr> {
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    pub fn contains_key(self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The entries in print order.
    pub fn iter(self) -> AttrsIter<'a> {
        AttrsIter { attrs: self, i: 0 }
    }

    /// An owned copy, to edit and intern again.
    pub fn to_dict(self) -> AttrDict {
        match self {
            Attrs::Dict(d) => d.clone(),
            Attrs::Stored { .. } => AttrDict {
                entries: self
                    .iter()
                    .map(|(k, v)| (intern_key(k), v.clone()))
                    .collect(),
            },
        }
    }

    /// Writes the dictionary as Paddle prints it (`{k:v,...}`).
    pub fn write_to(self, out: &mut String) {
        write_dict(self.iter(), out)
    }
}

/// The entries of an [`Attrs`], in print order.
pub struct AttrsIter<'a> {
    attrs: Attrs<'a>,
    i: usize,
}

impl<'a> Iterator for AttrsIter<'a> {
    type Item = (&'a str, &'a Attr);

    fn next(&mut self) -> Option<Self::Item> {
        let i = self.i;
        self.i += 1;
        match self.attrs {
            Attrs::Stored { store, entries } => entries.get(i).map(|&e| store.entry(e)),
            Attrs::Dict(d) => d.entries.get(i).map(|(k, v)| (*k, v)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dict(i: usize) -> AttrDict {
        let mut d = AttrDict::default();
        d.push("name", Attr::string(&format!("linear_{i}.w_0")));
        d.push("shape", Attr::Array(vec![Attr::Int((i % 7) as i64)]));
        d
    }

    /// Interning finds what it stored across many growths of both tables (the slots keep half
    /// of each hash, which finding and growing must place alike), directly or from a worker's
    /// `LocalDicts`.
    #[test]
    fn dictionaries_are_found_again_after_the_tables_grow() {
        let n = 50_000;
        let mut store = AttrStore::default();
        let ids: Vec<u32> = (0..n).map(|i| store.intern(dict(i))).collect();
        assert_eq!(store.len(), n);
        let distinct: std::collections::HashSet<u32> = ids.iter().copied().collect();
        assert_eq!(distinct.len(), n);
        for i in (0..n).rev() {
            assert_eq!(
                store.intern(dict(i)),
                ids[i],
                "dictionary {i} interned again"
            );
        }
        let mut local = LocalDicts::default();
        let local_ids: Vec<u32> = (0..n).step_by(97).map(|i| local.dict_of(dict(i))).collect();
        let mut found = LocalIds::default();
        found.reset(&local);
        for (k, i) in (0..n).step_by(97).enumerate() {
            let id = store.intern_local(&mut local, &mut found, local_ids[k] as usize);
            assert_eq!(id, ids[i], "dictionary {i} from a worker");
        }
        assert_eq!(store.len(), n);
        let d = store.get(ids[12_345]).to_dict();
        assert_eq!(d, dict(12_345));
    }
}
