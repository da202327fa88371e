//! Persistable state a rule creates (`state NAME: TYPE = init`): a keyword argument of main
//! plus an initializer in the startup program that publishes it under the name. This is how
//! the Paddle dialect represents persistable state, not a choice of any pass, so it is the
//! engine's, not a rule file's.

use super::*;
// How the Paddle dialect represents persistable state (the op that publishes a startup value
// under a name, the attributes of a persistable keyword argument of main): the dialect's.
use crate::dialect::protocol::{
    state_name_attr, PERSISTABLE_KWARG_ATTRS, PUBLISH_NAME_ATTR, PUBLISH_OP,
};

impl<'a> Engine<'a> {
    /// Builds an op at the end of the startup program (for state initializers).
    pub(super) fn build_startup(
        &mut self,
        lr: &'a CompiledRule,
        b: &mut Bindings,
        bd: &'a Build,
    ) -> Result<ValueId, Diagnostic> {
        self.m.startup_mut();
        let mut dummy = Cursor::BlockEnd(self.m.main.top_block());
        let mut fx = Effects::default();
        let (sym, operands, attrs) =
            self.build_parts(lr, b, bd, Which::Startup, &mut dummy, &mut fx)?;
        let (attrs, types) = self.signature(lr, b, bd, &operands, attrs, Which::Startup)?;
        let sp = self.m.startup_mut();
        let top = sp.top_block();
        let op = sp.create_op(sym, attrs, &operands, &types, OpSyntax::Plain);
        sp.append(top, op);
        self.operand_lists.push(operands);
        if sp.num_results(op) == 0 {
            return Err(self.err(lr, bd.span, "a state initializer must produce a value"));
        }
        Ok(sp.result(op, 0))
    }

    /// Whether the input already had a persistable named `name` (see
    /// [`Engine::persistables`]). The first call hashes every such name; a name whose hash is
    /// among them is confirmed by comparing the names themselves, so the answer is exact while
    /// the engine keeps 8 bytes a name rather than a copy of each.
    pub(super) fn is_existing_persistable(&mut self, name: &str) -> bool {
        let m = &*self.m;
        let kwargs = &self.kwargs;
        let hashes = self.persistables.get_or_insert_with(|| {
            let mut hashes = rustc_hash::FxHashSet::default();
            for_each_persistable_name(m, kwargs, |n| {
                hashes.insert(name_hash(n));
            });
            hashes
        });
        if !hashes.contains(&name_hash(name)) {
            return false;
        }
        let mut found = false;
        for_each_persistable_name(m, kwargs, |n| found |= n == name);
        found
    }

    pub(super) fn create_state(
        &mut self,
        lr: &'a CompiledRule,
        b: &mut Bindings,
        name: &str,
        ty: TypeId,
        init: &'a Build,
        span: Span,
    ) -> Result<ValueId, Diagnostic> {
        if !crate::ir::parse::is_kwarg_name(name) {
            return Err(self
                .err(
                    lr,
                    span,
                    format!("the state name `{name}` cannot be a keyword argument name"),
                )
                .with_hint("keyword argument names hold only letters, digits and `_ . @ - /`: is a parameter name unusual?"));
        }
        let state_dist = self.m.ctx.ty(ty).dist().cloned();
        let pushed = state_dist
            .map(|dist| self.dist_ctx.push(DistContext { dist, exact: true }))
            .is_some();
        let init_v = self.build_startup(lr, b, init);
        if pushed {
            self.dist_ctx.pop();
        }
        let init_v = init_v?;
        let sp = self
            .m
            .startup
            .as_ref()
            .ok_or_else(|| self.err(lr, span, "no startup program"))?;
        let init_ty = sp.value_type(init_v);
        if init_ty != ty {
            return Err(self.err(
                lr,
                init.span,
                format!(
                    "the initializer makes a `{}` but the state is a `{}`",
                    self.m.ctx.type_text(init_ty),
                    self.m.ctx.type_text(ty)
                ),
            ));
        }
        let publish = self.m.ctx.sym(PUBLISH_OP);
        let mut d = AttrDict::default();
        d.set(PUBLISH_NAME_ATTR, Attr::string(name));
        let attrs = self.m.ctx.intern_attrs(d);
        let attrs = self.dist_attrs(Which::Startup, attrs, &[Some(init_v)], &[]);
        let sp = self.m.startup_mut();
        let top = sp.top_block();
        let op = sp.create_op(publish, attrs, &[Some(init_v)], &[], OpSyntax::Plain);
        sp.append(top, op);
        // The keyword argument, with its attributes in Paddle's order.
        let kattrs = match self.kwarg_attrs {
            Some(id) => id,
            None => {
                let mut kd = AttrDict::default();
                for (k, v) in PERSISTABLE_KWARG_ATTRS {
                    let a = if *v == "true" {
                        Attr::Bool(true)
                    } else {
                        Attr::Word((*v).into())
                    };
                    kd.push(k, a);
                }
                *self.kwarg_attrs.insert(self.m.ctx.intern_attrs(kd))
            }
        };
        let sym = self.m.ctx.sym(name);
        let top = self.m.main.top_block();
        let v = self.m.main.add_kwarg(top, sym, ty, kattrs);
        self.states.insert(sym, (ty, v));
        Ok(v)
    }
}

fn name_hash(name: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    name.hash(&mut h);
    h.finish()
}

/// Calls `f` with the name of every persistable of `m`: keyword arguments of main, parameters,
/// what the startup program publishes.
fn for_each_persistable_name(
    m: &Module,
    kwargs: &FxHashMap<Sym, ValueId>,
    mut f: impl FnMut(&str),
) {
    for s in kwargs.keys() {
        f(m.ctx.str(*s));
    }
    let progs = std::iter::once(&m.main).chain(m.startup.as_ref());
    for p in progs {
        for op in p.walk() {
            let Some(key) = state_name_attr(m.ctx.str(p.op_name(op))) else {
                continue;
            };
            if let Some(crate::ir::Attr::Str(n)) = m.ctx.attrs(p.op_attrs(op)).get(key) {
                f(n);
            }
        }
    }
}
