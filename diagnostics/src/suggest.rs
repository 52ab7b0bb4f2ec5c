//! Did-you-mean: the nearest known name to an unknown one.

/// The candidate closest to `unknown` by edit distance, when it is close enough to be a
/// plausible typo (at most a third of the longer name, and never the name itself).
pub fn nearest<'a>(unknown: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        if candidate == unknown {
            continue;
        }
        let distance = strsim::damerau_levenshtein(unknown, candidate);
        let limit = (unknown.chars().count().max(candidate.chars().count()) / 3).max(1);
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

/// `did you mean `x`?` for the nearest candidate, if any.
pub fn did_you_mean<'a>(unknown: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    nearest(unknown, candidates).map(|name| format!("did you mean `{name}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

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
