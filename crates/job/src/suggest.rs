//! "Did you mean" suggestions: the closest known name by edit distance.

/// Levenshtein distance between two ASCII-lowercased strings.
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_ascii_lowercase().chars().collect();
    let b: Vec<char> = b.to_ascii_lowercase().chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The closest candidate, if it is close enough to be a plausible typo (fio's threshold: at
/// most half the input's length). Candidates of the same `family_` as the input (sharing the
/// text up to the input's last underscore) are preferred, so `blocksize_foo` suggests
/// `blocksize_range` rather than `blocksize`.
pub fn closest<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    // Names are short; a long input is no typo of one (and would make the search quadratic).
    if input.len() > 64 {
        return None;
    }
    let input_l = input.to_ascii_lowercase();
    let family = input_l.rfind('_').map(|i| &input_l[..=i]);
    let mut best: Option<(usize, usize, &str)> = None;
    for c in candidates {
        let d = distance(&input_l, c);
        let cl = c.to_ascii_lowercase();
        let score = match family {
            Some(f) if cl.starts_with(f) => d.saturating_sub(2),
            _ => d,
        };
        let better = match best {
            None => true,
            Some((bs, _, _)) => score < bs,
        };
        if better {
            best = Some((score, d, c));
        }
    }
    let limit = input.len().div_ceil(2);
    best.filter(|(_, d, _)| *d <= limit).map(|(_, _, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_basics() {
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("same", "SAME"), 0);
    }

    #[test]
    fn closest_picks_typos_only() {
        let names = ["iodepth", "ioengine", "blocksize_range"];
        assert_eq!(closest("iodpeth", names), Some("iodepth"));
        assert_eq!(closest("blocksize_foo", names), Some("blocksize_range"));
        assert_eq!(closest("zzzzzz", names), None);
        assert_eq!(closest(&"iodepth".repeat(20), names), None);
    }
}
