//! Job files as fio reads them: INI sections (`[global]` or a job name), `;`/`#` comments
//! (whole line or trailing), bare options, `include FILE` inside a section (nested, loops
//! detected, no sections in included files), and value substitution (`${ENV}`, `$pagesize`,
//! `$mb_memory`, `$ncpus` with arithmetic). The output is a list of raw sections; options are
//! interpreted later by `resolve`.

use crate::error::{JobError, Location};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One `name[=value]` as written, with its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawOpt {
    pub name: String,
    /// `None` for a bare option (`time_based`).
    pub value: Option<String>,
    /// The value as written, before `${VAR}`/keyword substitution (for messages).
    pub written: Option<String>,
    pub loc: Location,
}

/// A `[section]` (or a `--name=` block of the command line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub global: bool,
    pub opts: Vec<RawOpt>,
    pub loc: Location,
    /// Job file path; None for the command line.
    pub source: Option<String>,
    /// Index of the job file (0 for the command line, 1.. for files).
    pub file_index: usize,
}

/// Values substituted into option values.
#[derive(Debug, Clone, PartialEq)]
pub struct SubstEnv {
    pub vars: HashMap<String, String>,
    pub pagesize: u64,
    pub mb_memory: u64,
    pub ncpus: u64,
}

impl SubstEnv {
    /// The process environment and this machine's page size, memory and CPU count.
    pub fn from_system() -> Self {
        SubstEnv {
            vars: std::env::vars().collect(),
            pagesize: system_pagesize(),
            mb_memory: system_mb_memory(),
            ncpus: system_ncpus(),
        }
    }
}

fn system_pagesize() -> u64 {
    // KernelPageSize of the first mapping is the base page size; 4 KiB is the fallback.
    proc_kb_field("/proc/self/smaps", "KernelPageSize:").map_or(4096, |kb| kb * 1024)
}

fn system_mb_memory() -> u64 {
    proc_kb_field("/proc/meminfo", "MemTotal:").map_or(0, |kb| kb / 1024)
}

/// The first `<key> N kB` line of a /proc file, as N.
fn proc_kb_field(path: &str, key: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok().and_then(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    })
}

/// fio's `$ncpus` is the number of configured CPUs (cpuN entries in sysfs), not the ones this
/// process may run on.
fn system_ncpus() -> u64 {
    let configured = std::fs::read_dir("/sys/devices/system/cpu")
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| {
                    let n = e.file_name();
                    let n = n.to_string_lossy();
                    n.strip_prefix("cpu")
                        .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
                })
                .count() as u64
        })
        .unwrap_or(0);
    if configured > 0 {
        return configured;
    }
    std::thread::available_parallelism()
        .map(|n| n.get() as u64)
        .unwrap_or(1)
}

/// Replace `${VAR}` (undefined -> empty) and fio's keywords in a value. When a keyword was
/// replaced and the result has arithmetic, it is parenthesised so it gets evaluated.
pub fn substitute(s: &str, env: &SubstEnv) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    let mut keyword = false;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(body) = after.strip_prefix('{') {
            let end = body
                .find('}')
                .ok_or_else(|| format!("unterminated '${{' in '{s}'"))?;
            out.push_str(env.vars.get(&body[..end]).map(String::as_str).unwrap_or(""));
            rest = &body[end + 1..];
            continue;
        }
        let kw = [
            ("pagesize", env.pagesize),
            ("mb_memory", env.mb_memory),
            ("ncpus", env.ncpus),
        ]
        .into_iter()
        .find(|(k, _)| after.starts_with(k));
        match kw {
            Some((k, v)) => {
                out.push_str(&v.to_string());
                rest = &after[k.len()..];
                keyword = true;
            }
            None => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    if keyword && !out.starts_with('(') && out.chars().skip(1).any(|c| "+-*/".contains(c)) {
        out = format!("({out})");
    }
    Ok(out)
}

/// Where included files come from (the real file system, or memory in tests and the fuzzer).
pub trait IncludeFs {
    /// Does the path name something?
    fn exists(&self, p: &Path) -> bool;
    /// A stable identity for loop detection.
    fn canonical(&self, p: &Path) -> std::io::Result<PathBuf>;
    /// The file's text.
    fn read(&self, p: &Path) -> std::io::Result<String>;
}

/// The real file system. Only regular files up to 16 MiB are read, so `include /dev/zero`
/// is an error rather than a hang.
pub struct RealFs;

impl IncludeFs for RealFs {
    fn exists(&self, p: &Path) -> bool {
        p.exists()
    }
    fn canonical(&self, p: &Path) -> std::io::Result<PathBuf> {
        std::fs::canonicalize(p)
    }
    fn read(&self, p: &Path) -> std::io::Result<String> {
        // Checked on the descriptor: a name swapped for a FIFO after a path check blocked.
        fiox_guard::input::read_text(p, fiox_guard::input::JOB_FILE_MAX)
    }
}

/// Reads job files; tracks the include chain for loop detection.
pub struct FileReader<'a> {
    pub env: &'a SubstEnv,
    /// `--section=` filters (empty = all sections).
    pub only_sections: &'a [String],
    fs: &'a dyn IncludeFs,
    stack: Vec<PathBuf>,
}

impl<'a> FileReader<'a> {
    /// A reader whose includes come from the real file system.
    pub fn new(env: &'a SubstEnv, only_sections: &'a [String]) -> Self {
        Self::with_fs(env, only_sections, &RealFs)
    }

    /// A reader whose includes come from `fs`.
    pub fn with_fs(env: &'a SubstEnv, only_sections: &'a [String], fs: &'a dyn IncludeFs) -> Self {
        FileReader {
            env,
            only_sections,
            fs,
            stack: Vec::new(),
        }
    }

    /// Parse a top-level job file's text. `path` names it in messages and anchors includes.
    pub fn parse_text(
        &mut self,
        text: &str,
        path: &str,
        file_index: usize,
    ) -> Result<Vec<Section>, JobError> {
        let mut sections: Vec<Section> = Vec::new();
        let mut skipping = false;
        for (n, line) in text.lines().enumerate() {
            let loc = Location::File {
                path: path.to_string(),
                line: n + 1,
            };
            let Some(content) = clean_line(line) else {
                continue;
            };
            if let Some(name) = section_header(content, &loc)? {
                skipping = !self.only_sections.is_empty()
                    && !name.starts_with("global")
                    && !self.only_sections.iter().any(|s| s == &name);
                if !skipping {
                    sections.push(Section {
                        global: name.starts_with("global"),
                        name,
                        opts: Vec::new(),
                        loc,
                        source: Some(path.to_string()),
                        file_index,
                    });
                }
                continue;
            }
            if skipping {
                continue;
            }
            let Some(sec) = sections.last_mut() else {
                return Err(JobError::new(
                    loc,
                    format!("option '{content}' is outside of any [section]"),
                ));
            };
            self.line_into(content, &loc, path, &mut sec.opts)?;
        }
        Ok(sections)
    }

    /// One option line (or include) of a section.
    fn line_into(
        &mut self,
        content: &str,
        loc: &Location,
        path: &str,
        opts: &mut Vec<RawOpt>,
    ) -> Result<(), JobError> {
        if let Some(target) = include_target(content) {
            return self.include(target, loc, path, opts);
        }
        opts.push(split_option(content, loc, self.env)?);
        Ok(())
    }

    fn include(
        &mut self,
        target: &str,
        loc: &Location,
        from: &str,
        opts: &mut Vec<RawOpt>,
    ) -> Result<(), JobError> {
        let resolved = resolve_include(target, from, self.fs);
        let canon = self.fs.canonical(&resolved).map_err(|e| {
            JobError::new(
                loc.clone(),
                format!("cannot include '{target}': {}", io_reason(&e)),
            )
        })?;
        let top = self.fs.canonical(Path::new(from)).ok();
        if self.stack.contains(&canon) || top.as_ref() == Some(&canon) {
            return Err(JobError::new(
                loc.clone(),
                format!("include loop: '{target}' includes itself (directly or indirectly)"),
            ));
        }
        if self.stack.len() >= 16 {
            return Err(JobError::new(
                loc.clone(),
                "includes are nested more than 16 deep",
            ));
        }
        let text = self.fs.read(&canon).map_err(|e| {
            JobError::new(
                loc.clone(),
                format!("cannot include '{target}': {}", io_reason(&e)),
            )
        })?;
        let inc_path = resolved.to_string_lossy().to_string();
        self.stack.push(canon);
        let r = self.include_lines(&text, &inc_path, opts);
        self.stack.pop();
        r
    }

    fn include_lines(
        &mut self,
        text: &str,
        path: &str,
        opts: &mut Vec<RawOpt>,
    ) -> Result<(), JobError> {
        for (n, line) in text.lines().enumerate() {
            let loc = Location::File {
                path: path.to_string(),
                line: n + 1,
            };
            let Some(content) = clean_line(line) else {
                continue;
            };
            if content.starts_with('[') {
                return Err(JobError::new(
                    loc,
                    "an included file cannot start new [sections]",
                ));
            }
            self.line_into(content, &loc, path, opts)?;
        }
        Ok(())
    }
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    }
}

/// fio tries the name as given, then relative to the including file's directory.
fn resolve_include(target: &str, from: &str, fs: &dyn IncludeFs) -> PathBuf {
    let direct = PathBuf::from(target);
    if direct.is_absolute() || fs.exists(&direct) {
        return direct;
    }
    match Path::new(from).parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(target),
        _ => direct,
    }
}

/// Strip blanks and comments; None for empty/comment lines.
fn clean_line(line: &str) -> Option<&str> {
    let t = line.trim();
    if t.is_empty() || t.starts_with(';') || t.starts_with('#') {
        return None;
    }
    let end = t.find([';', '#']).unwrap_or(t.len());
    let t = t[..end].trim();
    (!t.is_empty()).then_some(t)
}

fn section_header(content: &str, loc: &Location) -> Result<Option<String>, JobError> {
    let Some(inner) = content.strip_prefix('[') else {
        return Ok(None);
    };
    let Some(name) = inner.strip_suffix(']') else {
        return Err(JobError::new(
            loc.clone(),
            format!("section header '{content}' has no closing ']'"),
        ));
    };
    let name = name.trim();
    if name.is_empty() {
        return Err(JobError::new(loc.clone(), "empty section name '[]'"));
    }
    Ok(Some(name.to_string()))
}

fn include_target(content: &str) -> Option<&str> {
    let rest = content.strip_prefix("include")?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let t = rest.trim();
    (!t.is_empty()).then_some(t)
}

/// `name = value` / `name` -> RawOpt with substitutions applied to the value.
pub fn split_option(content: &str, loc: &Location, env: &SubstEnv) -> Result<RawOpt, JobError> {
    let (name, written) = match content.split_once('=') {
        Some((n, v)) => (n.trim(), Some(v.trim())),
        None => (content.trim(), None),
    };
    let value = written;
    if name.is_empty() {
        return Err(JobError::new(
            loc.clone(),
            format!("'{content}' has no option name before '='"),
        ));
    }
    let value = match value {
        Some(v) => {
            let sub = substitute(v, env)
                .map_err(|m| JobError::new(loc.clone(), format!("{name}: {m}")))?;
            Some(sub)
        }
        None => None,
    };

    Ok(RawOpt {
        name: name.to_string(),
        value,
        written: written.map(str::to_string),
        loc: loc.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn env() -> SubstEnv {
        SubstEnv {
            vars: [("DEV".to_string(), "/dev/nvme0n1".to_string())].into(),
            pagesize: 4096,
            mb_memory: 1000,
            ncpus: 4,
        }
    }

    #[test]
    fn system_values_are_plausible() {
        let e = SubstEnv::from_system();
        assert!(e.pagesize >= 4096 && e.pagesize.is_power_of_two());
        assert!(e.ncpus >= 1);
        assert!(e.mb_memory >= 1);
    }

    #[test]
    fn substitution() {
        let e = env();
        assert_eq!(substitute("${DEV}", &e).unwrap(), "/dev/nvme0n1");
        assert_eq!(substitute("${NOPE}x", &e).unwrap(), "x");
        assert_eq!(substitute("$pagesize", &e).unwrap(), "4096");
        assert_eq!(substitute("$mb_memory/2", &e).unwrap(), "(1000/2)");
        assert_eq!(substitute("$ncpus*2", &e).unwrap(), "(4*2)");
        assert_eq!(
            substitute("$jobname.$jobnum", &e).unwrap(),
            "$jobname.$jobnum"
        );
        assert!(substitute("${OPEN", &e).is_err());
    }

    #[test]
    fn sections_comments_and_bare_options() {
        let e = env();
        let text = "; top comment\n[global]\nbs=4k ; trailing\n# other\n[job1]\ntime_based\nsize = 1g # x\n";
        let s = FileReader::new(&e, &[])
            .parse_text(text, "t.fio", 1)
            .unwrap();
        assert_eq!(s.len(), 2);
        assert!(s[0].global);
        assert_eq!(s[0].opts[0].value.as_deref(), Some("4k"));
        assert_eq!(s[1].name, "job1");
        assert_eq!(s[1].opts[0].value, None);
        assert_eq!(s[1].opts[1].value.as_deref(), Some("1g"));
        assert_eq!(
            s[1].opts[1].loc,
            Location::File {
                path: "t.fio".into(),
                line: 7
            }
        );
    }

    #[test]
    fn empty_substitution_is_an_error() {
        let e = env();
        let s = FileReader::new(&e, &[])
            .parse_text("[a]\nrw=${FIO_RW}\n", "t.fio", 1)
            .unwrap();
        let err = crate::resolve::resolve(&s).unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.fio:2: rw=${FIO_RW}: the value is empty after substitution (is the variable set in the environment?)"
        );
    }

    #[test]
    fn option_outside_section() {
        let e = env();
        let err = FileReader::new(&e, &[])
            .parse_text("bs=4k\n", "t.fio", 1)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.fio:1: option 'bs=4k' is outside of any [section]"
        );
    }

    #[test]
    fn section_filter_keeps_globals() {
        let e = env();
        let only = vec!["b".to_string()];
        let s = FileReader::new(&e, &only)
            .parse_text("[global]\nbs=1k\n[a]\nsize=1m\n[b]\nsize=2m\n", "t", 1)
            .unwrap();
        let names: Vec<_> = s.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["global", "b"]);
    }
}
