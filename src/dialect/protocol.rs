//! Paddle's training-program protocol: what a program means beyond what each op computes.
//!
//! - **Stages.** Every op of a training program carries its stage in one attribute
//!   ([`ROLE_ATTR`], `op_role`): forward, backward or optimize ([`STAGES`]). Rules name stages
//!   (`%x in backward`, `at end of optimize`), the engine keeps stage markers, the executor runs
//!   the optimize stage once per step.
//! - **The scope.** Persistable state lives in a scope of named variables shared by the startup
//!   and the main program. Some ops read a variable by name ([`SCOPE_READERS`]), others write
//!   one ([`SCOPE_WRITERS`]); the attribute holding the name is part of the op's protocol.
//!   A rule's `state` is published by [`PUBLISH_OP`] in the startup program and read in main as
//!   a keyword argument with [`PERSISTABLE_KWARG_ATTRS`].
//!
//! This is the dialect's knowledge, like the op table: the rewrite engine, the e-graph, the
//! executor, `irw diff` and the JSON writer ask here instead of naming these ops themselves.

/// The stages of a Paddle training program, by the `op_role` value Paddle gives their ops.
/// `%x in backward` and `at end of optimize` use these names.
pub const STAGES: &[(&str, i64)] = &[("forward", 0), ("backward", 1), ("optimize", 2)];

/// The attribute that holds an op's stage.
pub const ROLE_ATTR: &str = "op_role";

/// The `op_role` value of the stage called `name`.
pub fn stage_role(name: &str) -> Option<i64> {
    STAGES.iter().find(|(n, _)| *n == name).map(|(_, r)| *r)
}

/// Where a persistable value gets its scope name: `(op, attribute)`. Writers are in the startup
/// program (they create the variable), readers in main (they bind to it by name). A value a
/// writer stores or a reader binds must carry `persistable:[true]`, or Paddle's executor treats
/// it as a temporary (SPEC.md §10b E5b/E5c, §11 item 5).
pub static SCOPE_WRITERS: &[(&str, &str)] = &[
    ("builtin.set_parameter", "parameter_name"),
    ("builtin.shadow_output", "output_name"),
];
pub static SCOPE_READERS: &[(&str, &str)] =
    &[("builtin.parameter", "parameter_name"), (DATA_OP, "name")];

/// The op that binds a fed input, or a persistable variable when it carries
/// `persistable:[true]`; its name is a scope variable's only then.
pub const DATA_OP: &str = "pd_op.data";

/// Every attribute that names a scope variable, in the order an op is searched for one.
pub const SCOPE_NAME_ATTRS: &[&str] = &["parameter_name", "name", "output_name"];

/// The attribute under which `op` writes a scope variable (publishes a value under a name).
pub fn scope_writer_name_attr(op: &str) -> Option<&'static str> {
    SCOPE_WRITERS
        .iter()
        .find(|(o, _)| *o == op)
        .map(|(_, a)| *a)
}

/// The attribute under which `op` reads a scope variable (binds a value to it by name);
/// [`DATA_OP`] reads one only when it carries `persistable:[true]`.
pub fn scope_reader_name_attr(op: &str) -> Option<&'static str> {
    SCOPE_READERS
        .iter()
        .find(|(o, _)| *o == op)
        .map(|(_, a)| *a)
}

/// The attribute under which `op` names persistable state whatever its other attributes:
/// parameters read and every writer ([`DATA_OP`] only sometimes names state, so not it).
pub fn state_name_attr(op: &str) -> Option<&'static str> {
    SCOPE_WRITERS
        .iter()
        .chain(SCOPE_READERS)
        .find(|(o, _)| *o == op && *o != DATA_OP)
        .map(|(_, a)| *a)
}

/// The op that publishes a persistable value of the startup program under a name (Paddle's
/// `builtin.shadow_output {output_name}`) ...
pub const PUBLISH_OP: &str = "builtin.shadow_output";
/// ... and its name attribute.
pub const PUBLISH_NAME_ATTR: &str = "output_name";

/// The attributes of a persistable keyword argument of main, in Paddle's order.
pub const PERSISTABLE_KWARG_ATTRS: &[(&str, &str)] =
    &[("place", "Place(cpu)"), ("persistable", "true")];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_protocol_names_ops_of_the_table_and_its_own_attributes() {
        for (op, attr) in SCOPE_WRITERS.iter().chain(SCOPE_READERS) {
            assert!(super::super::Dialect::get().spec(op).is_some(), "{op}");
            assert!(SCOPE_NAME_ATTRS.contains(attr), "{attr}");
        }
        assert_eq!(scope_writer_name_attr(PUBLISH_OP), Some(PUBLISH_NAME_ATTR));
        assert_eq!(state_name_attr("builtin.parameter"), Some("parameter_name"));
        assert_eq!(state_name_attr(DATA_OP), None);
        assert_eq!(scope_reader_name_attr(DATA_OP), Some("name"));
        assert_eq!(stage_role("optimize"), Some(2));
    }
}
