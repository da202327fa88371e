//! The IR: Paddle PIR programs as an arena of ops, values, blocks and regions.
//!
//! ```
//! use irw::{parse_module, print_module};
//! use irw::SourceFile;
//!
//! let text = "{\n    (%0) = \"pd_op.full\" () {dtype:float32,value:1} : () -> tensor<f32>\n}\n";
//! let m = parse_module(&SourceFile::new("ex.ir", text)).unwrap();
//! assert_eq!(m.main.num_ops(), 1);
//! assert_eq!(print_module(&m), text); // printing a parsed dump gives back the same bytes
//! ```
//!
//! - [`program`]: the arena and the O(1)/O(uses) edits a rewrite needs;
//! - [`context`]: interned names, types and attribute dictionaries shared by a module;
//! - [`parse`] / [`print`]: the text form (`grammar/pir.pest`);
//! - [`verify`]: the invariants every program must satisfy after parsing and after every rewrite.

mod attr;
mod attr_store;
mod context;
pub mod dist;
mod dist_derive;
mod intern;
mod module;
pub mod parse;
pub mod print;
mod program;
mod types;
pub mod verify;
pub mod verify_dist;
mod window;

pub use attr::{format_float_like_paddle, intern_key, Attr, AttrDict, AttrId};
pub use attr_store::Attrs;
pub use context::Context;
pub use dist::{DistSlot, OpDistAttr, Placement, ReduceKind, SlotType, TensorDist};
pub use dist_derive::declared_result_dist;
pub use intern::Sym;
pub use module::{Module, Which};
pub use parse::{parse_module, parse_module_reference, parse_startup_into};
pub use print::{print_module, print_module_to, print_program, print_program_to};
pub use program::{BlockId, Kwarg, OpId, OpSyntax, Program, ValueDef, ValueId};
pub(crate) use types::format_type;
pub use types::{DType, Type, TypeId};
pub use verify::{OpCounts, OperandCheck, VerifyError};
