//! A cache of fixed size for what ops of one kind repeat word for word (attribute lists, result
//! types), so reading or writing converts each once however large the program.
//!
//! Direct-mapped: a key has one slot, chosen by its hash, and a newer key for that slot takes it.
//! A program whose ops share a few hundred dictionaries finds nearly all of them, and one whose
//! every op has a dictionary of its own (a name in each) costs a miss per op, as without the
//! cache, instead of holding an entry per op: memory stays [`SLOTS`] entries. What is cached
//! must be what converting the key again would give, so a hit or a miss never changes the
//! result.

use rustc_hash::FxHasher;
use std::hash::{Hash, Hasher};

/// Slots in a cache (a power of two).
const SLOTS: usize = 1 << 12;

pub struct Recent<K, V> {
    slots: Vec<Option<(K, V)>>,
}

impl<K: Hash + Eq, V> Recent<K, V> {
    pub fn new() -> Self {
        Recent {
            slots: std::iter::repeat_with(|| None).take(SLOTS).collect(),
        }
    }

    fn slot(k: &K) -> usize {
        let mut h = FxHasher::default();
        k.hash(&mut h);
        // The high bits: FxHasher's low bits are weak.
        (h.finish() >> 52) as usize & (SLOTS - 1)
    }

    pub fn get(&self, k: &K) -> Option<&V> {
        match &self.slots[Self::slot(k)] {
            Some((key, v)) if key == k => Some(v),
            _ => None,
        }
    }

    pub fn insert(&mut self, k: K, v: V) {
        let i = Self::slot(&k);
        self.slots[i] = Some((k, v));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_it_holds_and_forgets_what_a_newer_key_displaced() {
        let mut r = Recent::new();
        for k in 0..10 * SLOTS as u64 {
            r.insert(k, k * 2);
        }
        // Every key still held maps to its own value; the held ones are at most SLOTS.
        let held: Vec<u64> = (0..10 * SLOTS as u64)
            .filter(|k| r.get(k).is_some())
            .collect();
        assert!(held.len() <= SLOTS && held.len() > SLOTS / 2);
        assert!(held.iter().all(|k| r.get(k) == Some(&(k * 2))));
        // The last key inserted is always found.
        let last = 10 * SLOTS as u64 - 1;
        assert_eq!(r.get(&last), Some(&(last * 2)));
    }
}
