//! The scope: persistable tensors by name, shared by the startup and the main program.
//!
//! Paddle keeps parameters, optimizer state, the learning rate and any buffer a pass creates in
//! a scope, and programs reach them by name: `builtin.parameter {parameter_name}`, a persistable
//! `pd_op.data {name}`, a keyword argument `%kwarg_<name>`; the startup program writes them with
//! `builtin.set_parameter` and `builtin.shadow_output`. An in-place op on such a value writes the
//! scope entry. Iteration order is insertion order (deterministic reports and dumps).

use indexmap::IndexMap;

use super::tensor::Tensor;

/// Named persistable tensors.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scope {
    vars: IndexMap<String, Tensor>,
}

impl Scope {
    pub fn new() -> Scope {
        Scope::default()
    }

    pub fn get(&self, name: &str) -> Option<&Tensor> {
        self.vars.get(name)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.vars.contains_key(name)
    }

    /// Sets `name` (keeping its position if it exists).
    pub fn set(&mut self, name: &str, t: Tensor) {
        if let Some(slot) = self.vars.get_mut(name) {
            *slot = t;
        } else {
            self.vars.insert(name.to_string(), t);
        }
    }

    /// Entries in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Tensor)> {
        self.vars.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.vars.keys().map(|k| k.as_str())
    }

    pub fn len(&self) -> usize {
        self.vars.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }
}
