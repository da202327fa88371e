//! Interning: op names and types are stored once per [`Context`] and referred to by small
//! copyable ids (attribute dictionaries have their own, more compact store:
//! [`AttrStore`](super::attr_store::AttrStore)).
//!
//! Why: a training program repeats the same few dozen names and types on hundreds of thousands
//! of ops. Interning makes an op a handful of integers (no per-op heap allocation), makes
//! equality an integer comparison (which the e-graph relies on for hash-consing), and lets the
//! printer cache each type's text.
//!
//! [`Context`]: super::Context

use indexmap::IndexSet;
use rustc_hash::FxHasher;
use std::hash::{BuildHasherDefault, Hash};

/// An interned string (op names, keyword-argument names).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sym(pub(crate) u32);

/// A table of unique values of `T`, each with a dense index. Each value is stored once (an
/// `IndexSet`), which matters for the many distinct attribute dictionaries of a large program.
#[derive(Debug, Clone)]
pub struct Interner<T: Hash + Eq + Clone> {
    items: IndexSet<T, BuildHasherDefault<FxHasher>>,
}

impl<T: Hash + Eq + Clone> Default for Interner<T> {
    fn default() -> Self {
        Interner {
            items: IndexSet::default(),
        }
    }
}

impl<T: Hash + Eq + Clone> Interner<T> {
    /// The index of `item`, adding it if it is new.
    pub fn intern(&mut self, item: T) -> u32 {
        let (i, _) = self.items.insert_full(item);
        u32::try_from(i).expect("fewer than 2^32 interned items")
    }

    /// The index of `item` if it was interned.
    pub fn lookup<Q>(&self, item: &Q) -> Option<u32>
    where
        Q: Hash + indexmap::Equivalent<T> + ?Sized,
    {
        self.items.get_index_of(item).map(|i| i as u32)
    }

    pub fn get(&self, i: u32) -> &T {
        &self.items[i as usize]
    }

    pub fn len(&self) -> usize {
        self.items.len()
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
