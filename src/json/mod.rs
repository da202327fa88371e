//! Paddle's PIR JSON program format (`paddle.base.core.serialize_pir_program` /
//! `deserialize_pir_program`, Paddle 3.3.1), so irw is a drop-in step between Paddle saving a
//! program and Paddle loading and training it. The format is described, with the experiments
//! behind each rule, in `fixtures/paddle-json/SPEC.md`.
//!
//! ```
//! use irw::paddle_json::{looks_like_json, read_module, write_module, TagHints};
//! use irw::SourceFile;
//!
//! let text = r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[
//!   {"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[
//!     {"#":"1.full","I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[],"NCHW",[],0]}}],
//!      "A":[{"N":"shape","AT":{"#":"1.a_intarray","D":[]}},{"N":"value","AT":{"#":"0.a_f64","D":2.0}},
//!           {"N":"dtype","AT":{"#":"1.a_dtype","D":"float32"}},{"N":"place","AT":{"#":"1.a_place","D":[1,0,""]}}],
//!      "OA":[{"N":"stop_gradient","AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]}}]}]}]}]}}"##;
//! let src = SourceFile::new("p.json", text);
//! assert!(looks_like_json(&src.text));
//! let m = read_module(&src).unwrap();
//! assert_eq!(
//!     irw::print_module(&m),
//!     "{\n    (%0) = \"pd_op.full\" () {dtype:float32,place:Place(cpu),shape:[],stop_gradient:[true],value:2} : () -> tensor<f32>\n}\n"
//! );
//! let out = write_module(&m, &TagHints::default()).unwrap();
//! let again: serde_json::Value = serde_json::from_str(&out.main).unwrap();
//! assert_eq!(again["program"]["regions"][0]["blocks"][0]["ops"][0]["A"][3]["AT"]["D"], 2.0);
//! ```
//!
//! - [`read`]: JSON → IR (the same IR the text parser builds from Paddle's print of the
//!   program); input detection by content ([`looks_like_json`]).
//! - [`write`]: IR → JSON, including the encoding of keyword arguments Paddle can load.
//! - [`check`]: what must hold before writing, because Paddle's loader does not check it.
//! - [`refusal`]: why a module is not written, shown at the op's line in its input file.
//! - [`attrs`], [`types`]: attribute values and types, with tags from the dialect table
//!   ([`crate::dialect::paddle_json`]).
//! - [`dist`]: distribution types and `op_dist_attr` (`pd_dist`), as Paddle 3.3.1 writes them.
//! - [`locate`]: byte offsets of JSON paths, so diagnostics point into the file, and the
//!   document's outline, which the reader splits the levels above the ops with.
//! - [`recent`]: the fixed-size cache reading and writing convert repeated texts through.

pub mod attrs;
pub mod check;
pub mod dist;
pub mod locate;
pub mod read;
mod recent;
pub mod refusal;
pub mod types;
pub mod write;

pub use attrs::TagHints;
pub use read::{looks_like_json, read_module, read_module_with_hints, read_startup_into};
pub use refusal::Origins;
pub use write::{write_module, write_module_from, JsonModule};
