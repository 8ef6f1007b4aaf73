//! Where the cgroup controllers machine limits need are mounted and where this process sits in
//! them: cgroup v1 (a `cgroup` mount per controller, memory and cpuset) or cgroup2 (one
//! `cgroup2` mount), read from /proc/self/mountinfo and /proc/self/cgroup; and the CPU lists
//! cpuset files hold ("0-3,6").

use std::path::{Path, PathBuf};

/// One hierarchy fiox makes a group in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hier {
    /// `memory` or `cpuset` (v1), `unified` (cgroup2: both in one group).
    pub controller: &'static str,
    /// The directory of this process's group in it: where it goes back to after the run.
    pub current: PathBuf,
    /// Where fiox's group goes: under the current group (v1: the caller's own limits still
    /// apply above fiox's), or the cgroup2 root (a non-root v2 group holding processes cannot
    /// hand controllers to a child).
    pub parent: PathBuf,
    pub v2: bool,
}

/// A mount from mountinfo: (mount point, root inside the hierarchy, fs type, super options).
fn mounts(mountinfo: &str) -> Vec<(String, String, String, String)> {
    mountinfo
        .lines()
        .filter_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let f: Vec<&str> = left.split(' ').collect();
            let r: Vec<&str> = right.split(' ').collect();
            Some((
                unescape(f.get(4)?),
                unescape(f.get(3)?),
                r.first()?.to_string(),
                r.get(2).unwrap_or(&"").to_string(),
            ))
        })
        .collect()
}

/// mountinfo writes blanks, tabs, newlines and backslashes in paths as octal escapes.
fn unescape(s: &str) -> String {
    s.replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

/// This process's group path in the v1 hierarchy with `controller`, or in cgroup2 (`None`).
fn own_path(self_cgroup: &str, controller: Option<&str>) -> Option<String> {
    self_cgroup.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (id, ctrls, path) = (f.next()?, f.next()?, f.next()?);
        let hit = match controller {
            Some(c) => ctrls.split(',').any(|x| x == c),
            None => id == "0" && ctrls.is_empty(),
        };
        hit.then(|| path.to_string())
    })
}

/// `mount` + (`path` less the mount's `root`).
fn join(mount: &str, root: &str, path: &str) -> PathBuf {
    let rel = path
        .strip_prefix(root)
        .unwrap_or(path)
        .trim_start_matches('/');
    if rel.is_empty() {
        PathBuf::from(mount)
    } else {
        Path::new(mount).join(rel)
    }
}

/// The hierarchies for the controllers `want` (`memory`, `cpuset`): v1 when every wanted
/// controller has a v1 mount, else cgroup2; Err says what is missing.
pub(crate) fn find(
    mountinfo: &str,
    self_cgroup: &str,
    want: &[&'static str],
) -> Result<Vec<Hier>, String> {
    let ms = mounts(mountinfo);
    let v1: Vec<Option<Hier>> = want
        .iter()
        .map(|c| {
            let (mnt, root, _, _) = ms
                .iter()
                .find(|(_, _, ty, opts)| ty == "cgroup" && opts.split(',').any(|o| o == *c))?;
            let current = join(mnt, root, &own_path(self_cgroup, Some(c))?);
            Some(Hier {
                controller: c,
                parent: current.clone(),
                current,
                v2: false,
            })
        })
        .collect();
    if v1.iter().all(Option::is_some) {
        return Ok(v1.into_iter().flatten().collect());
    }
    let Some((mnt, root, _, _)) = ms.iter().find(|(_, _, ty, _)| ty == "cgroup2") else {
        return Err(format!(
            "no cgroup hierarchy with the {} controller{} is mounted (cgroup v1 mounts \
             under /sys/fs/cgroup/CONTROLLER, or cgroup2)",
            want.join(" and "),
            if want.len() > 1 { "s" } else { "" }
        ));
    };
    let path = own_path(self_cgroup, None).unwrap_or_else(|| "/".into());
    Ok(vec![Hier {
        controller: "unified",
        current: join(mnt, root, &path),
        parent: PathBuf::from(mnt),
        v2: true,
    }])
}

/// The CPUs of a cpuset list ("0-3,6"), ascending; None when it is no such list.
pub(crate) fn parse_cpu_list(s: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse().ok()?, b.trim().parse().ok()?),
            None => {
                let n: u32 = part.trim().parse().ok()?;
                (n, n)
            }
        };
        if b < a || b - a > 65_536 {
            return None;
        }
        out.extend(a..=b);
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

/// A CPU list as cpuset files write it ("0-3,6").
pub(crate) fn cpu_list_text(cpus: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1: &str = "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n\
        34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n\
        35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
        41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
    const SELF_V1: &str = "4:memory:/process_api/abc\n3:cpuset:/\n0::/\n";

    #[test]
    fn v1_hierarchies_are_found_under_the_current_groups() {
        let h = find(V1, SELF_V1, &["memory", "cpuset"]).unwrap();
        assert_eq!(h.len(), 2);
        assert_eq!(
            h[0].current,
            Path::new("/sys/fs/cgroup/memory/process_api/abc")
        );
        assert_eq!(h[0].parent, h[0].current);
        assert_eq!(h[1].current, Path::new("/sys/fs/cgroup/cpuset"));
        assert!(!h[0].v2 && h[1].controller == "cpuset");
    }

    #[test]
    fn cgroup2_is_used_when_a_v1_controller_is_missing() {
        let v2 = "30 23 0:27 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n";
        let h = find(v2, "0::/user.slice/session-1.scope\n", &["memory"]).unwrap();
        assert_eq!(h.len(), 1);
        assert!(h[0].v2);
        assert_eq!(
            h[0].current,
            Path::new("/sys/fs/cgroup/user.slice/session-1.scope")
        );
        assert_eq!(h[0].parent, Path::new("/sys/fs/cgroup"));
        let e = find(
            "1 2 0:1 / /proc rw - proc proc rw\n",
            "",
            &["memory", "cpuset"],
        );
        assert!(e.unwrap_err().contains("memory and cpuset controllers"));
    }

    #[test]
    fn cpu_lists_round_trip() {
        assert_eq!(parse_cpu_list("0-3,6\n"), Some(vec![0, 1, 2, 3, 6]));
        assert_eq!(parse_cpu_list("1"), Some(vec![1]));
        assert_eq!(parse_cpu_list(""), Some(vec![]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("x"), None);
        assert_eq!(cpu_list_text(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(cpu_list_text(&[]), "");
    }
}
