//! `--showcmd`: resolved jobs back to one command line that resolves to the same jobs. Each job
//! (first clone only; `numjobs` recreates the rest) becomes `--name=NAME` followed by its
//! options as written (globals already inherited), plus `--stonewall` where a new job file
//! implied the barrier. A profile's jobs come back as the `--profile=` arguments that made them
//! (first, as a profile's switch must stand before any `--name=`; its jobs still come last).

use crate::defs;
use crate::JobSpec;

/// The command line as separate arguments (without the program name).
pub fn showcmd_args(jobs: &[JobSpec]) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(call) = jobs.iter().find_map(|j| j.profile.as_ref()) {
        out.extend(call.args.iter().cloned());
    }
    for j in jobs
        .iter()
        .filter(|j| j.clone_index == 0 && j.profile.is_none())
    {
        out.push(format!("--name={}", j.name));
        for (k, v) in &j.raw_options {
            let bare = v.is_empty()
                && (defs::lookup(k).or_else(|| defs::fio_only::lookup(k)))
                    .is_some_and(|d| d.kind.allows_bare());
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

    #[test]
    fn fio_only_options_round_trip() {
        let jobs = crate::parse_job_text(
            "[a]\nioengine=rdma\nverb=read\ngpu_dev_id=1\nflow=2\nrw=read:-8k\n",
            "t.fio",
        )
        .unwrap();
        let args = showcmd_args(&jobs);
        assert_eq!(
            args,
            [
                "--name=a",
                "--ioengine=rdma",
                "--verb=read",
                "--gpu_dev_id=1",
                "--flow=2",
                "--rw=read:-8k"
            ]
        );
        let env = crate::jobfile::SubstEnv::from_system();
        let again = crate::parse_invocation_with(&args, &env, &mut |_| Ok(String::new())).unwrap();
        assert_eq!(again.jobs[0].unsupported, jobs[0].unsupported);
        // rdma, verb, gpu_dev_id (flow and rw=read:-8k run).
        assert_eq!(again.jobs[0].unsupported.len(), 3);
        assert!(again.jobs[0].seq_backwards);
    }
}
