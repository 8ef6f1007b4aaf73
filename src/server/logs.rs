//! The logs a client's jobs write (`write_bw_log`, `write_lat_log`, `write_iops_log`,
//! `write_hist_log`) go back to that client, as fio's server sends them (IOLOG), instead of
//! onto the server's disk: [`divert`] points each job's log prefix into a private directory
//! fiox makes (one subdirectory per job and log kind, mode 0700), [`Diverted::collect`] sends
//! every file found there under the name the job gave it, then removes what it made.
//!
//! Each file travels as its bytes (fio's stored form, [`fiox_netproto::iolog::stored`]):
//! the client's copy is the file fiox writes locally, whatever the log options.

use fiox_guard::Dir;
use fiox_job::JobSpec;
use fiox_netproto::iolog;
use std::ffi::{OsStr, OsString};
use std::io::Read;

/// The private directory and, per subdirectory, the directory part of the name the job gave
/// (with its `/`; empty for a bare name) and the job's 1-based number.
pub struct Diverted {
    dir: Dir,
    routes: Vec<(OsString, String, u32)>,
}

/// Point every log prefix of `jobs` into a private directory (None: no job writes a log).
pub fn divert(jobs: &mut [JobSpec]) -> Result<Option<Diverted>, String> {
    let wants = |j: &JobSpec| {
        let l = &j.logs;
        l.write_bw_log.is_some()
            || l.write_lat_log.is_some()
            || l.write_iops_log.is_some()
            || l.write_hist_log.is_some()
    };
    if !jobs.iter().any(wants) {
        return Ok(None);
    }
    let fail =
        |e: &dyn std::fmt::Display| format!("fiox --server: a directory for the job logs: {e}");
    let tmp = Dir::open(&std::env::temp_dir()).map_err(|e| fail(&e))?;
    let name = format!(
        "fiox-server-logs.{}.{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos()
    );
    let dir = tmp
        .create_dir(OsStr::new(&name), 0o700)
        .map_err(|e| fail(&e))?;
    let mut routes = Vec::new();
    for (i, job) in jobs.iter_mut().enumerate() {
        let l = &mut job.logs;
        for (kind, slot) in [
            ("bw", &mut l.write_bw_log),
            ("lat", &mut l.write_lat_log),
            ("iops", &mut l.write_iops_log),
            ("hist", &mut l.write_hist_log),
        ] {
            let Some(prefix) = slot.as_deref() else {
                continue;
            };
            let (parent, base) = match prefix.rfind('/') {
                Some(k) => (prefix[..=k].to_string(), prefix[k + 1..].to_string()),
                None => (String::new(), prefix.to_string()),
            };
            let sub = OsString::from(format!("j{i}-{kind}"));
            let d = dir.create_dir(&sub, 0o700).map_err(|e| fail(&e))?;
            *slot = Some(format!("{}/{base}", d.path().display()));
            routes.push((sub, parent, i as u32 + 1));
        }
    }
    Ok(Some(Diverted { dir, routes }))
}

impl Diverted {
    /// The IOLOG payloads of every log written, and what could not be read; everything fiox
    /// made is removed.
    pub fn collect(self) -> (Vec<Vec<u8>>, Vec<String>) {
        let (mut logs, mut problems) = (Vec::new(), Vec::new());
        for (sub, parent, thread) in &self.routes {
            let d = match self.dir.subdir(sub) {
                Ok(d) => d,
                Err(e) => {
                    problems.push(format!("the job logs of {}: {e}", sub.to_string_lossy()));
                    continue;
                }
            };
            for name in d.names().unwrap_or_default() {
                let n = name.to_string_lossy().into_owned();
                match read(&d, &name) {
                    Ok(bytes) => logs.push(iolog::stored(
                        &format!("{parent}{n}"),
                        *thread,
                        iolog::log_type_of(&n),
                        &bytes,
                    )),
                    Err(e) => problems.push(format!("the job log {parent}{n}: {e}")),
                }
                let _ = d.remove_owned(&name);
            }
            let _ = self.dir.remove_empty_made_dir(sub);
        }
        if let Ok((parent, name)) = Dir::open_parent(self.dir.path()) {
            let _ = parent.remove_empty_made_dir(&name);
        }
        (logs, problems)
    }
}

fn read(d: &Dir, name: &OsStr) -> std::io::Result<Vec<u8>> {
    let mut f = d
        .open_file(name, libc::O_RDONLY)
        .map_err(std::io::Error::other)?
        .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))?;
    let mut b = Vec::new();
    f.read_to_end(&mut b)?;
    Ok(b)
}
