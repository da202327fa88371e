//! Generates the rule-file parser from `grammar/rules.lalrpop` (LALRPOP at build time,
//! `lalrpop-util` at run time).
fn main() {
    println!("cargo:rerun-if-changed=grammar/rules.lalrpop");
    if std::path::Path::new("grammar/rules.lalrpop").exists() {
        lalrpop::Configuration::new()
            .set_in_dir("grammar")
            .set_out_dir(std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo"))
            .process()
            .expect("grammar/rules.lalrpop compiles");
    }
}
