//! Interning: op names, attribute dictionaries and types are stored once per [`Context`] and
//! referred to by small copyable ids.
//!
//! Why: a training program repeats the same few dozen attribute dictionaries and types on
//! hundreds of thousands of ops. Interning makes an op a handful of integers (no per-op heap
//! allocation), makes equality of attributes an integer comparison (which the e-graph relies
//! on for hash-consing), and lets the printer cache each dictionary's text.
//!
//! [`Context`]: super::Context

use rustc_hash::FxHashMap;
use std::hash::Hash;

/// An interned string (op names, keyword-argument names).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sym(pub(crate) u32);

/// A table of unique values of `T`, each with a dense index.
#[derive(Debug, Clone)]
pub struct Interner<T: Hash + Eq + Clone> {
    items: Vec<T>,
    index: FxHashMap<T, u32>,
}

impl<T: Hash + Eq + Clone> Default for Interner<T> {
    fn default() -> Self {
        Interner {
            items: Vec::new(),
            index: FxHashMap::default(),
        }
    }
}

impl<T: Hash + Eq + Clone> Interner<T> {
    /// The index of `item`, adding it if it is new.
    pub fn intern(&mut self, item: T) -> u32 {
        if let Some(&i) = self.index.get(&item) {
            return i;
        }
        let i = u32::try_from(self.items.len()).expect("fewer than 2^32 interned items");
        self.items.push(item.clone());
        self.index.insert(item, i);
        i
    }

    /// The index of `item` if it was interned.
    pub fn lookup<Q>(&self, item: &Q) -> Option<u32>
    where
        T: std::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.index.get(item).copied()
    }

    pub fn get(&self, i: u32) -> &T {
        &self.items[i as usize]
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// String interner.
#[derive(Debug, Clone, Default)]
pub struct Symbols {
    inner: Interner<Box<str>>,
}

impl Symbols {
    pub fn intern(&mut self, s: &str) -> Sym {
        if let Some(i) = self.inner.lookup(s) {
            return Sym(i);
        }
        Sym(self.inner.intern(s.into()))
    }

    pub fn lookup(&self, s: &str) -> Option<Sym> {
        self.inner.lookup(s).map(Sym)
    }

    pub fn get(&self, s: Sym) -> &str {
        self.inner.get(s.0)
    }
}
