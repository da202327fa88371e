//! Bounds on how deeply a rule file can nest, checked on the raw text before the parser runs.
//!
//! Why: the LALRPOP parser itself keeps its stack on the heap, but the syntax tree it builds is
//! recursive (`Box<Expr>`), and everything after it (the resolver's checks, the engine's
//! evaluation, even dropping the tree) recurses once per level. `1+1+1+...` or `------1` with a
//! hundred thousand operators is a perfectly parsable file that overflows the stack. Rejecting
//! such files before a tree exists is the only place where no recursion has happened yet.
//!
//! The check is lexical and conservative. Every level of the tree needs at least one token: an
//! operator (`+ - * /`, `not`, `and`, `or`, `if`) or an opening bracket (`( [ {`). So the tree is
//! no deeper than the bracket depth plus the number of operators and brackets in one clause (an
//! expression never spans a `;`). Both are bounded far above what a hand-written rule uses
//! (grad_merge.rw needs a bracket depth of 5 and at most 16 such tokens per clause).
//! Interpolations inside strings (`"{name(%p)}@GRAD"`) are expressions too and are counted;
//! the rest of a string and `//` comments are not.

use crate::diag::{Diagnostic, SourceFile};

/// Deepest nesting of `(`, `[` and `{` in a rule file.
const MAX_RULE_NESTING: usize = 64;
/// Most operators and opening brackets in one `;`-terminated clause.
const MAX_CLAUSE_OPERATORS: usize = 256;

/// Rejects text nested deeper than [`MAX_RULE_NESTING`] or with a clause longer than
/// [`MAX_CLAUSE_OPERATORS`] operators.
pub fn check(src: &SourceFile) -> Result<(), Diagnostic> {
    let b = src.text.as_bytes();
    let mut depth = 0usize;
    let mut ops = 0usize;
    // Inside a string, and inside an interpolation `{...}` of that string.
    let mut in_str = false;
    let mut in_interp = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if in_str && !in_interp {
            match c {
                b'\\' => i += 1,
                b'"' | b'\n' => in_str = false,
                b'{' if b.get(i + 1) == Some(&b'{') => i += 1,
                b'{' => {
                    in_interp = true;
                    ops += 1;
                }
                _ => {}
            }
            i += 1;
            continue;
        }
        match c {
            b'/' if b.get(i + 1) == Some(&b'/') && !in_interp => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'"' if !in_interp => in_str = true,
            b'"' | b'\n' if in_interp => {
                // The string (or line) ends inside an interpolation: the parser reports it.
                in_interp = false;
                in_str = false;
            }
            b'}' if in_interp => in_interp = false,
            b';' => ops = 0,
            b'(' | b'[' | b'{' => {
                depth += 1;
                ops += 1;
                if depth > MAX_RULE_NESTING {
                    return Err(Diagnostic::at(
                        src,
                        i,
                        format!("brackets nested deeper than {MAX_RULE_NESTING} levels"),
                    )
                    .with_hint("irw bounds nesting so that no rule file can exhaust its stack"));
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'+' | b'-' | b'*' | b'/' => ops += 1,
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                if matches!(&b[start..i], b"not" | b"and" | b"or" | b"if") {
                    ops += 1;
                    if ops > MAX_CLAUSE_OPERATORS {
                        return Err(too_long(src, start));
                    }
                }
                continue;
            }
            _ => {}
        }
        if ops > MAX_CLAUSE_OPERATORS {
            return Err(too_long(src, i));
        }
        i += 1;
    }
    Ok(())
}

fn too_long(src: &SourceFile, at: usize) -> Diagnostic {
    Diagnostic::at(
        src,
        at,
        format!("this clause has more than {MAX_CLAUSE_OPERATORS} operators and brackets"),
    )
    .with_hint(
        "split the expression: irw bounds its depth so that no rule file can exhaust its stack",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_str(text: &str) -> Result<(), String> {
        check(&SourceFile::new("t.rw", text)).map_err(|d| d.to_string())
    }

    #[test]
    fn shipped_rule_files_are_well_within_the_bounds() {
        for f in ["grad_merge.rw", "hoist_reduce.rw", "master_grad.rw"] {
            let text = std::fs::read_to_string(format!("rules/{f}")).unwrap();
            check_str(&text).unwrap();
        }
    }

    #[test]
    fn long_operator_chains_are_rejected_at_the_operator() {
        let text = format!("param k: int = 1{};", "+1".repeat(300));
        let e = check_str(&text).unwrap_err();
        assert!(e.contains("more than 256 operators"), "{e}");
        assert!(e.starts_with("t.rw:1:"), "{e}");
        let text = format!("param k: int = {}1;", "-".repeat(300));
        assert!(check_str(&text).is_err());
        let text = format!("param k: bool = {}true;", "not ".repeat(300));
        assert!(check_str(&text).is_err());
    }

    #[test]
    fn clauses_reset_the_count_and_brackets_bound_depth() {
        let clause = format!("param k: int = 1{};\n", "+1".repeat(200));
        check_str(&clause.repeat(10)).unwrap();
        let text = format!("param k: int = {}1{};", "(".repeat(65), ")".repeat(65));
        let e = check_str(&text).unwrap_err();
        assert!(e.contains("nested deeper than 64"), "{e}");
    }

    #[test]
    fn comments_and_plain_string_text_do_not_count() {
        let text = format!(
            "// {}\nparam s: string = \"{}{{{{\";\n",
            "- ".repeat(1000),
            "-(".repeat(1000)
        );
        check_str(&text).unwrap();
        let text = format!("param s: string = \"{{{}1}}\";", "-".repeat(300));
        assert!(check_str(&text).is_err());
    }
}
