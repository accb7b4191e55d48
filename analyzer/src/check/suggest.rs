//! "Did you mean" suggestions: the closest known name by edit distance, shared by the checker and
//! the lint so both suggest alike.

/// The candidate closest to `name`, if it is close enough to be a plausible typo: at most one
/// edit for short names, at most a third of the name's length for longer ones.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .filter(|c| *c != name)
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, c)| (*d, c.len()))
        .map(|(_, c)| c)
}

/// Like [`closest`], but only when no other candidate is as close: the suggestion a tool may
/// apply without asking (a misspelt key renamed by `ozcheck lint --fix`).
pub fn unique_closest<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    let mut best: Option<(usize, &str)> = None;
    let mut tied = false;
    for c in candidates.into_iter().filter(|c| *c != name) {
        let d = edit_distance(name, c);
        if d > limit {
            continue;
        }
        match best {
            Some((b, s)) if d == b && s != c => tied = true,
            Some((b, _)) if d >= b => {}
            _ => {
                best = Some((d, c));
                tied = false;
            }
        }
    }
    best.filter(|_| !tied).map(|(_, c)| c)
}

/// Optimal string alignment distance (Levenshtein plus adjacent transpositions), on chars.
/// Names here are short (identifiers of at most the expression's 1 KiB), so the quadratic table
/// is cheap; inputs longer than 64 chars are not compared at all.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len() > 64 || b.len() > 64 {
        return usize::MAX;
    }
    let width = b.len() + 1;
    let mut table = vec![0usize; (a.len() + 1) * width];
    for (i, row) in table.chunks_mut(width).enumerate() {
        row[0] = i;
    }
    for (j, cell) in table.iter_mut().take(width).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (table[(i - 1) * width + j] + 1)
                .min(table[i * width + j - 1] + 1)
                .min(table[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(table[(i - 2) * width + j - 2] + 1);
            }
            table[i * width + j] = best;
        }
    }
    table[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let fields = [
            "id",
            "source",
            "type",
            "action",
            "subject",
            "text",
            "attributes",
        ];
        assert_eq!(closest("atributes", fields), Some("attributes"));
        assert_eq!(closest("actoin", fields), Some("action"));
        assert_eq!(closest("txt", fields), Some("text"));
        assert_eq!(closest("labels", fields), None);
        assert_eq!(closest("text", fields), None);
    }

    #[test]
    fn a_unique_suggestion_has_no_tie() {
        assert_eq!(
            unique_closest("timout", ["timeout", "types"]),
            Some("timeout")
        );
        // `typo` is one edit from both `type` and `typos`.
        assert_eq!(unique_closest("typo", ["type", "typos"]), None);
        assert_eq!(unique_closest("labels", ["text"]), None);
    }
}
