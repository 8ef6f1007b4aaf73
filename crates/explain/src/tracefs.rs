//! Finding the kernel's tracing filesystem and reading what the programs need from it: each
//! tracepoint's id (to open it as a perf event) and its fields' offsets (the `format` files:
//! the programs read the event record at those offsets, so no offset is hard-coded). When
//! tracefs is not mounted, it is mounted on /sys/kernel/tracing through the guard and
//! unmounted again when the tracer is done.

use crate::ExplainError;
use fiox_guard::mount::{self, Source};
use fiox_guard::Dir;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The tracefs in use, and the mount fiox made for it (if it made one).
#[derive(Debug)]
pub struct Tracefs {
    root: PathBuf,
    ours: Option<(Dir, u64)>,
}

/// A tracepoint's id and the offsets of its fields.
#[derive(Debug, Clone)]
pub struct Event {
    pub id: u64,
    fields: Vec<(String, u32)>,
}

impl Event {
    /// Offset of `field` in the event record.
    pub fn off(&self, field: &str) -> Result<i16, ExplainError> {
        self.fields
            .iter()
            .find(|(n, _)| n == field)
            .and_then(|(_, o)| i16::try_from(*o).ok())
            .ok_or_else(|| ExplainError::Unavailable(format!("tracepoint field {field} missing")))
    }
}

/// Field names and offsets of a `format` file's text.
pub fn parse_format(text: &str) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut decl = None;
        let mut off = None;
        for part in line.trim().split(';') {
            let part = part.trim();
            if let Some(d) = part.strip_prefix("field:") {
                decl = d
                    .split_whitespace()
                    .last()
                    .map(|n| n.split('[').next().unwrap_or(n).to_string());
            } else if let Some(o) = part.strip_prefix("offset:") {
                off = o.trim().parse::<u32>().ok();
            }
        }
        if let (Some(d), Some(o)) = (decl, off) {
            out.push((d, o));
        }
    }
    out
}

impl Tracefs {
    /// The mounted tracefs, or one fiox mounts now.
    pub fn open() -> Result<Tracefs, ExplainError> {
        for p in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
            if Path::new(p).join("events").is_dir() {
                return Ok(Tracefs {
                    root: PathBuf::from(p),
                    ours: None,
                });
            }
        }
        let unavailable = |what: &str, e: &dyn std::fmt::Display| {
            ExplainError::Unavailable(format!(
                "tracefs is not mounted and mounting it on /sys/kernel/tracing failed ({what}: {e}); --explain needs root"
            ))
        };
        let parent = Dir::open(Path::new("/sys/kernel")).map_err(|e| unavailable("open", &e))?;
        let what = Source {
            fstype: "tracefs",
            source: OsStr::new("nodev"),
            flags: libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            data: "",
        };
        let id = mount::mount_on(&parent, OsStr::new("tracing"), &what)
            .map_err(|e| unavailable("mount", &e))?;
        Ok(Tracefs {
            root: PathBuf::from("/sys/kernel/tracing"),
            ours: Some((parent, id)),
        })
    }

    /// Where it is mounted.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A tracepoint, e.g. ("sched", "sched_switch").
    pub fn event(&self, group: &str, name: &str) -> Result<Event, ExplainError> {
        let dir = self.root.join("events").join(group).join(name);
        let read = |f: &str| {
            std::fs::read_to_string(dir.join(f)).map_err(|e| {
                ExplainError::Unavailable(format!(
                    "tracepoint {group}:{name} cannot be read ({}: {e})",
                    dir.join(f).display()
                ))
            })
        };
        let id = read("id")?.trim().parse::<u64>().map_err(|_| {
            ExplainError::Unavailable(format!("tracepoint {group}:{name} has no numeric id"))
        })?;
        Ok(Event {
            id,
            fields: parse_format(&read("format")?),
        })
    }

    /// Unmount what fiox mounted (the perf events opened stay valid without it).
    pub fn close(mut self) {
        self.unmount();
    }

    fn unmount(&mut self) {
        if let Some((parent, id)) = self.ours.take() {
            let _ = mount::unmount(&parent, OsStr::new("tracing"), id, true);
        }
    }
}

impl Drop for Tracefs {
    fn drop(&mut self) {
        self.unmount();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_field_offsets() {
        let f = "name: block_rq_issue\nID: 2104\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;\n\tfield:__data_loc char[] cmd;\toffset:60;\tsize:4;\tsigned:0;\n\nprint fmt: \"%d\"\n";
        let v = parse_format(f);
        assert!(v.contains(&("dev".to_string(), 8)));
        assert!(v.contains(&("rwbs".to_string(), 34)));
        assert!(v.contains(&("cmd".to_string(), 60)));
    }
}
