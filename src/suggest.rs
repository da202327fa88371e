//! "Did you mean" hints: the names closest to a misspelt one, by edit distance.
//!
//! Shared by the rule loader (a `require` naming no rule), the rule checker (op names, stages,
//! values, functions, dtypes) and the dialect's verifier (an unknown op named like a known
//! one), so every hint is worded and ranked the same way; it sits below them all.

/// Edit distance counting a swap of two neighbouring characters as one edit (optimal string
/// alignment), for "did you mean" hints (short strings only): `sdg_` is one edit from `sgd_`.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut prev2: Vec<usize> = Vec::new();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                cur[j] = cur[j].min(prev2[j - 2] + 1);
            }
        }
        prev2 = std::mem::replace(&mut prev, cur);
    }
    prev[b.len()]
}

/// The candidates closest to `name` (at most `max` edits away), all of them when several tie:
/// a hint that picks one of two equally close names at random misleads. A candidate whose
/// length differs from `name`'s by more than the edits still allowed is passed over without
/// computing the distance (it cannot be closer), so a long name, such as a corrupted input's,
/// costs a length comparison per candidate rather than a table of its length.
pub fn closest<'c>(
    name: &str,
    candidates: impl IntoIterator<Item = &'c str>,
    max: usize,
) -> Vec<&'c str> {
    let mut best = max + 1;
    let mut out: Vec<&'c str> = Vec::new();
    let mut chars: Option<Vec<char>> = None;
    let len = name.chars().count();
    for c in candidates {
        if len.abs_diff(c.chars().count()) > best.min(max) {
            continue;
        }
        let a = chars.get_or_insert_with(|| name.chars().collect());
        let d = edit_distance(a, &c.chars().collect::<Vec<char>>());
        if d < best {
            best = d;
            out.clear();
        }
        if d == best && !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// `did you mean `a`?` / `did you mean `a` or `b`?` for [`closest`]'s answer (none when empty
/// or when more than three names tie: then no hint helps).
pub fn did_you_mean(close: &[&str]) -> Option<String> {
    let quoted: Vec<String> = close.iter().map(|c| format!("`{c}`")).collect();
    match quoted.len() {
        0 => None,
        1 => Some(format!("did you mean {}?", quoted[0])),
        2 | 3 => Some(format!(
            "did you mean {} or {}?",
            quoted[..quoted.len() - 1].join(", "),
            quoted[quoted.len() - 1]
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::closest;

    /// A candidate is passed over by its length only when it cannot tie: `ab` (2 edits from
    /// `abcd` by length alone) still ties with `abxy` at 2.
    #[test]
    fn ties_at_the_length_bound_are_kept() {
        assert_eq!(
            closest("abcd", ["abxy", "ab", "zzzzzzzz"], 2),
            ["abxy", "ab"]
        );
        assert_eq!(closest("sdg_", ["sgd_", "adam_"], 2), ["sgd_"]);
        let long = "a".repeat(100_000);
        assert!(closest(&long, ["sgd_"], 2).is_empty());
    }
}
