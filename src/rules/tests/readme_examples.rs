//! rules/README.md's examples that are whole rule files load: the page is all an author reads,
//! so what it shows must be what irw accepts. A code block is a whole file when it starts with a
//! comment or an op declaration and elides nothing (`...`); the others are fragments (a
//! `match` clause, a guard, a command line, a message).

use crate::rules::load_str;

#[test]
fn readme_rule_files_load() {
    let readme = std::fs::read_to_string("rules/README.md").expect("rules/README.md");
    let mut checked = 0;
    for (i, block) in readme.split("```").skip(1).step_by(2).enumerate() {
        let Some(text) = block.strip_prefix('\n') else {
            continue;
        };
        let whole = (text.starts_with("//") || text.starts_with("op ")) && !text.contains("...");
        if !whole {
            continue;
        }
        let name = format!("readme_block_{i}.rw");
        if let Err(e) = load_str(&name, text, std::path::Path::new("rules"), &[]) {
            panic!("rules/README.md code block {i} does not load:\n{text}\n{e}");
        }
        checked += 1;
    }
    assert!(
        checked >= 4,
        "only {checked} whole rule files found in rules/README.md"
    );
}
