//! `--showcmd`: resolved jobs back to one command line that resolves to the same jobs. Each job
//! (first clone only; `numjobs` recreates the rest) becomes `--name=NAME` followed by its
//! options as written (globals already inherited), plus `--stonewall` where a new job file
//! implied the barrier.

use crate::defs;
use crate::JobSpec;

/// The command line as separate arguments (without the program name).
pub fn showcmd_args(jobs: &[JobSpec]) -> Vec<String> {
    let mut out = Vec::new();
    for j in jobs.iter().filter(|j| j.clone_index == 0) {
        out.push(format!("--name={}", j.name));
        for (k, v) in &j.raw_options {
            let bare = v.is_empty() && defs::lookup(k).is_some_and(|d| d.kind.allows_bare());
            out.push(if bare {
                format!("--{k}")
            } else {
                format!("--{k}={v}")
            });
        }
        let has_stonewall = j
            .raw_options
            .iter()
            .any(|(k, _)| defs::lookup(k).is_some_and(|d| d.name == "stonewall"));
        if j.stonewall && !has_stonewall {
            out.push("--stonewall".to_string());
        }
    }
    out
}

/// The command line as one shell-quoted string starting with `fiox`.
pub fn showcmd(jobs: &[JobSpec]) -> String {
    std::iter::once("fiox".to_string())
        .chain(showcmd_args(jobs).iter().map(|a| shell_quote(a)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Quote for a POSIX shell when needed.
pub fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=.,:/+%@^".contains(c));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("--bs=4k"), "--bs=4k");
        assert_eq!(shell_quote("--description=a b"), "'--description=a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote("--filename=$x"), "'--filename=$x'");
    }
}
