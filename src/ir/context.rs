//! The [`Context`] owns everything interned: strings, types and attribute dictionaries. One
//! context serves a whole [`Module`](super::Module) (main and startup programs), so the same
//! name or dictionary has the same id in both.

use super::attr::{AttrDict, AttrId};
use super::attr_store::{AttrStore, Attrs, LocalDicts, LocalIds};
use super::intern::{Interner, Sym, Symbols};
use super::types::{format_type, Type, TypeId};

#[derive(Debug, Clone)]
pub struct Context {
    pub syms: Symbols,
    types: Interner<Type>,
    type_text: Vec<String>,
    attrs: AttrStore,
    /// Whether a `pd_dist` type was interned.
    dist_types: bool,
}

impl Default for Context {
    fn default() -> Self {
        let mut ctx = Context {
            syms: Symbols::default(),
            types: Interner::default(),
            type_text: Vec::new(),
            attrs: AttrStore::default(),
            dist_types: false,
        };
        // Fixed ids for the two types every program needs.
        let null = ctx.intern_type(Type::Null);
        let unknown = ctx.intern_type(Type::Unknown);
        debug_assert_eq!((null, unknown), (Self::NULL_TYPE, Self::UNKNOWN_TYPE));
        let empty = ctx.intern_attrs(AttrDict::default());
        debug_assert_eq!(empty, Self::EMPTY_ATTRS);
        ctx
    }
}

impl Context {
    /// `<<NULL TYPE>>`.
    pub const NULL_TYPE: TypeId = TypeId(0);
    /// A type not printed where the value is defined and not yet known from a use.
    pub const UNKNOWN_TYPE: TypeId = TypeId(1);
    /// `{}`.
    pub const EMPTY_ATTRS: AttrId = AttrId(0);

    pub fn sym(&mut self, s: &str) -> Sym {
        self.syms.intern(s)
    }

    pub fn str(&self, s: Sym) -> &str {
        self.syms.get(s)
    }

    pub fn intern_type(&mut self, ty: Type) -> TypeId {
        let n = self.types.len();
        let id = self.types.intern(ty);
        if id as usize == n {
            let t = self.types.get(id).clone();
            self.dist_types |= matches!(t, Type::Dist { .. });
            let text = format_type(&t, &|tid| self.type_text[tid.0 as usize].clone());
            self.type_text.push(text);
        }
        TypeId(id)
    }

    pub fn ty(&self, id: TypeId) -> &Type {
        self.types.get(id.0)
    }

    /// The id of `ty` if some value of the program already has it.
    pub fn find_type(&self, ty: &Type) -> Option<TypeId> {
        self.types.lookup(ty).map(TypeId)
    }

    /// The printed form of a type.
    pub fn type_text(&self, id: TypeId) -> &str {
        &self.type_text[id.0 as usize]
    }

    pub fn intern_attrs(&mut self, dict: AttrDict) -> AttrId {
        AttrId(self.attrs.intern(dict))
    }

    /// Interns dictionary `i` of `local` (see `AttrStore::intern_local`).
    pub fn intern_local_attrs(
        &mut self,
        local: &mut LocalDicts,
        ids: &mut LocalIds,
        i: usize,
    ) -> AttrId {
        AttrId(self.attrs.intern_local(local, ids, i))
    }

    pub fn attrs(&self, id: AttrId) -> Attrs<'_> {
        self.attrs.get(id.0)
    }

    /// The printed form of a dictionary.
    pub fn attr_text(&self, id: AttrId) -> String {
        let mut s = String::new();
        self.write_attrs(id, &mut s);
        s
    }

    /// Writes a dictionary as Paddle prints it.
    pub fn write_attrs(&self, id: AttrId, out: &mut String) {
        self.attrs(id).write_to(out)
    }

    /// A copy of `id` with `key` set to `value`.
    pub fn with_attr(&mut self, id: AttrId, key: &str, value: super::Attr) -> AttrId {
        let mut d = self.attrs(id).to_dict();
        d.set(key, value);
        self.intern_attrs(d)
    }

    /// Whether any `pd_dist` type was ever interned: a dense program (no such type) has no
    /// distribution to check, which the verifier learns without walking its ops.
    pub fn has_dist_types(&self) -> bool {
        self.dist_types
    }

    /// Number of distinct types and dictionaries: every `TypeId` and `AttrId` is below them.
    pub fn interned_counts(&self) -> (usize, usize) {
        (self.types.len(), self.attrs.len())
    }
}
