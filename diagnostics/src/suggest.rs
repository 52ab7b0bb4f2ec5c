//! Did-you-mean: the nearest known name to an unknown one.

/// The candidate closest to `unknown` by edit distance, when it is close enough to be a
/// plausible typo (at most a third of the longer name, and never the name itself).
pub fn nearest<'a>(unknown: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let mut best: Option<(usize, &'a str)> = None;
    let unknown_len = unknown.chars().count();
    for candidate in candidates {
        if candidate == unknown {
            continue;
        }
        let candidate_len = candidate.chars().count();
        let limit = (unknown_len.max(candidate_len) / 3).max(1);
        // The distance is at least the difference in length: past the limit, no need to
        // compute it (its table is the product of the lengths: a 50 MB value against a
        // format name took seconds and gigabytes).
        if unknown_len.abs_diff(candidate_len) > limit {
            continue;
        }
        let distance = strsim::damerau_levenshtein(unknown, candidate);
        if distance > limit {
            continue;
        }
        // Ties go to the smaller name, so the suggestion never depends on input order.
        let better = match best {
            None => true,
            Some((d, name)) => distance < d || (distance == d && candidate < name),
        };
        if better {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, name)| name)
}

/// A value as a message quotes it: whole when short, else its first 60 characters and `…`
/// (a message must not carry a 50 MB string back).
pub fn excerpt(value: &str) -> std::borrow::Cow<'_, str> {
    const MAX: usize = 60;
    match value.char_indices().nth(MAX) {
        None => std::borrow::Cow::Borrowed(value),
        Some((cut, _)) => std::borrow::Cow::Owned(format!("{}…", &value[..cut])),
    }
}

/// `did you mean `x`?` for the nearest candidate, if any.
pub fn did_you_mean<'a>(unknown: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    nearest(unknown, candidates).map(|name| format!("did you mean `{name}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_value_is_compared_by_length_first_and_quoted_short() {
        // Without the length bound this builds a table of 50 M × 19 cells.
        let huge = "x".repeat(50 << 20);
        assert_eq!(nearest(&huge, ["workflow-draft/v1", "workflow-catalog/v1"]), None);
        assert_eq!(excerpt("short"), "short");
        assert_eq!(excerpt(&huge).chars().count(), 61);
        assert!(excerpt(&"é".repeat(100)).ends_with("é…"));
    }

    #[test]
    fn suggests_a_near_name() {
        let names = ["trigger.schedule", "trigger.webhook", "agent.task"];
        assert_eq!(nearest("trigger.schedul", names), Some("trigger.schedule"));
        assert_eq!(nearest("agent.tsak", names), Some("agent.task"));
    }

    #[test]
    fn suggests_nothing_for_a_far_name() {
        assert_eq!(nearest("completely.different", ["agent.task"]), None);
    }

    #[test]
    fn ties_break_by_name() {
        assert_eq!(nearest("ab", ["ac", "aa"]), Some("aa"));
    }
}
