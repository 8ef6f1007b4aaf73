//! Which results make which side of a comparison, for `fiox compare` and `fiox plot` alike.
//! A directory argument is one side (or one per variant when it holds an experiment's
//! manifest); file arguments are grouped by the directory they sit in, so the shell's
//! `before/*.json after/*.json` gives two sides named `before` and `after`; only when every
//! file shares one directory (and no directory is given) is each file its own side. `--side
//! NAME=GLOB` names a side and its files outright. Side names are made unique.

use crate::load::{load_run, load_sides, LoadError, Side};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The side name of each of `files`: the name of its directory, or, when they all share one
/// directory and `group` is false, the file's own name without `.json`. Names are unique:
/// directories of the same name are told apart by their path.
pub fn side_names(files: &[PathBuf], group: bool) -> Vec<String> {
    let by_dir = group || !share_one_directory(files);
    let keys: Vec<(PathBuf, String)> = files
        .iter()
        .map(|f| {
            let key = if by_dir { parent(f) } else { f.clone() };
            let name = dir_or_file_name(&key);
            (key, name)
        })
        .collect();
    unique(&keys)
}

fn parent(p: &Path) -> PathBuf {
    p.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// Whether all `files` sit in one directory (then they are not grouped by it).
pub fn share_one_directory(files: &[PathBuf]) -> bool {
    let first = files.first().map(|f| parent(f));
    files.iter().all(|f| Some(parent(f)) == first)
}

/// A file's name without `.json`, or a directory's name (the current directory's own name
/// for `.` or an empty path).
fn dir_or_file_name(p: &Path) -> String {
    let p = if p.as_os_str().is_empty() || p == Path::new(".") {
        std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
    } else {
        p.to_path_buf()
    };
    let name = p
        .file_name()
        .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into());
    name.trim_end_matches(".json").to_string()
}

/// Names for (key, name) pairs: equal keys keep one name; different keys with the same name
/// get their key's path instead, and if even that repeats, "-2", "-3"...
fn unique(keys: &[(PathBuf, String)]) -> Vec<String> {
    let mut owners: BTreeMap<&str, Vec<&PathBuf>> = BTreeMap::new();
    for (k, n) in keys {
        let o = owners.entry(n).or_default();
        if !o.contains(&k) {
            o.push(k);
        }
    }
    let mut named: BTreeMap<&PathBuf, String> = BTreeMap::new();
    let mut taken: BTreeMap<String, usize> = BTreeMap::new();
    for (k, n) in keys {
        if named.contains_key(k) {
            continue;
        }
        let mut name = if owners[n.as_str()].len() > 1 {
            k.display().to_string()
        } else {
            n.clone()
        };
        let count = taken.entry(name.clone()).or_default();
        *count += 1;
        if *count > 1 {
            name = format!("{name}-{count}");
        }
        named.insert(k, name);
    }
    keys.iter().map(|(k, _)| named[k].clone()).collect()
}

/// The sides of `fiox compare`'s arguments: `args` (files and directories, in order) and the
/// `--side NAME=GLOB` specs (after them, sides of one NAME merged).
pub fn load_args(args: &[PathBuf], specs: &[String]) -> Result<Vec<Side>, LoadError> {
    let files: Vec<PathBuf> = args.iter().filter(|p| !p.is_dir()).cloned().collect();
    let names = side_names(&files, files.len() < args.len());
    let mut sides: Vec<Side> = Vec::new();
    let mut file_names = names.iter();
    for a in args {
        if a.is_dir() {
            sides.extend(load_sides(a)?);
            continue;
        }
        let name = file_names.next().cloned().unwrap_or_default();
        let run = load_run(a)?;
        push_run(&mut sides, &name, run);
    }
    for spec in specs {
        let (name, pattern) = parse_spec(spec)?;
        let files = glob(pattern);
        if files.is_empty() {
            return Err(LoadError::Format {
                path: pattern.into(),
                why: format!("--side {spec}: the pattern matches no file"),
            });
        }
        for f in files {
            let run = load_run(&f)?;
            push_run(&mut sides, name, run);
        }
    }
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for s in &mut sides {
        let n = seen.entry(s.name.clone()).or_default();
        *n += 1;
        if *n > 1 {
            s.name = format!("{}-{n}", s.name);
        }
    }
    Ok(sides)
}

/// Add `run` to the side called `name`, making it at the end if there is none yet.
fn push_run(sides: &mut Vec<Side>, name: &str, run: crate::load::Run) {
    match sides.iter_mut().find(|s| s.name == name) {
        Some(s) => s.runs.push(run),
        None => sides.push(Side {
            name: name.to_string(),
            runs: vec![run],
            baseline: None,
        }),
    }
}

/// `NAME=GLOB` split; the name must be non-empty.
fn parse_spec(spec: &str) -> Result<(&str, &str), LoadError> {
    match spec.split_once('=') {
        Some((n, g)) if !n.is_empty() && !g.is_empty() => Ok((n, g)),
        _ => Err(LoadError::Format {
            path: spec.into(),
            why: "--side wants NAME=GLOB (e.g. --side 'before=runs/a-*.json')".into(),
        }),
    }
}

/// The files matching `pattern` (`*` and `?` in any path component), sorted; a directory
/// that matches stands for its `*.json` files.
pub fn glob(pattern: &str) -> Vec<PathBuf> {
    let absolute = pattern.starts_with('/');
    let mut found = vec![if absolute {
        PathBuf::from("/")
    } else {
        PathBuf::new()
    }];
    for part in pattern.split('/').filter(|p| !p.is_empty()) {
        let mut next = Vec::new();
        for base in &found {
            if !part.contains(['*', '?']) {
                next.push(base.join(part));
                continue;
            }
            let dir = if base.as_os_str().is_empty() {
                Path::new(".")
            } else {
                base
            };
            let Ok(rd) = std::fs::read_dir(dir) else {
                continue;
            };
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if (!name.starts_with('.') || part.starts_with('.')) && wild(part, &name) {
                    next.push(base.join(name));
                }
            }
        }
        found = next;
    }
    let mut out: Vec<PathBuf> = Vec::new();
    for p in found {
        if p.is_dir() {
            let json = std::fs::read_dir(&p).into_iter().flatten().flatten();
            out.extend(
                json.map(|e| e.path())
                    .filter(|f| f.extension().is_some_and(|x| x == "json")),
            );
        } else if p.is_file() {
            out.push(p);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Whether `name` matches the shell wildcard `pattern` (`*`: any run of characters, `?`: one).
fn wild(pattern: &str, name: &str) -> bool {
    let (p, s): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // ok[j]: pattern prefix so far matches name prefix of length j.
    let mut ok = vec![false; s.len() + 1];
    ok[0] = true;
    for c in p {
        let mut next = vec![false; s.len() + 1];
        for j in 0..=s.len() {
            next[j] = match c {
                '*' => ok[j] || (j > 0 && next[j - 1]),
                '?' => j > 0 && ok[j - 1],
                c => j > 0 && ok[j - 1] && s[j - 1] == c,
            };
        }
        ok = next;
    }
    ok[s.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(v: &[&str]) -> Vec<PathBuf> {
        v.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn files_group_by_directory() {
        let f = paths(&["before/r0.json", "before/r1.json", "after/r0.json"]);
        assert_eq!(side_names(&f, false), ["before", "before", "after"]);
        // All in one directory: each file is a side.
        let f = paths(&["x/a.json", "x/b.json"]);
        assert_eq!(side_names(&f, false), ["a", "b"]);
        assert_eq!(side_names(&f, true), ["x", "x"]);
        // Two directories of one name are told apart by their path.
        let f = paths(&["a/run/1.json", "b/run/1.json"]);
        assert_eq!(side_names(&f, false), ["a/run", "b/run"]);
    }

    #[test]
    fn wildcards() {
        assert!(wild("*.json", "r0.json"));
        assert!(wild("r?.json", "r1.json"));
        assert!(!wild("r?.json", "r10.json"));
        assert!(wild("a*b*c", "aXXbYc"));
        assert!(!wild("a*b", "ac"));
        assert!(parse_spec("x=*.json").is_ok());
        assert!(parse_spec("=*.json").is_err());
        assert!(parse_spec("x").is_err());
    }
}
