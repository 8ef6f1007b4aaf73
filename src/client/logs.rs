//! The logs servers send back (IOLOG), written where fio's client writes them: the log's
//! name on the server with `.HOST` after it (`/data/run_bw.1.log.host1`).
//!
//! A server chooses the name, so a hostile one could aim it anywhere (`/etc/cron.d/x`): fiox
//! writes a log only where this client's own job files or options named a place, that is when
//! its directory is written in what the client sent, or in the current directory for a bare
//! name; never through `..`, and through the guard (fiox's own earlier output is replaced, a
//! user's file is not).

use anyhow::{bail, Result};
use fiox_netproto::iolog::IoLog;
use std::io::Write;
use std::path::{Component, Path};

/// Write `log` as `NAME.HOST`; `sent`: the job texts and options sent to that server.
pub(super) fn write(log: &IoLog, host: &str, sent: &[String]) -> Result<()> {
    let path = format!("{}.{host}", log.name);
    allowed(Path::new(&path), sent)?;
    let text = log.text()?;
    let mut f = fiox_guard::output::open(
        Path::new(&path),
        fiox_guard::Open::Truncate,
        fiox_guard::Named::ByFiox,
    )?;
    f.write_all(&text)?;
    Ok(())
}

fn allowed(path: &Path, sent: &[String]) -> Result<()> {
    if path.components().any(|c| matches!(c, Component::ParentDir)) {
        bail!(
            "the server named a path with '..' ({}): not written",
            path.display()
        );
    }
    let dir = path.parent().map(|d| d.to_string_lossy().into_owned());
    match dir.as_deref() {
        None | Some("") => Ok(()),
        Some(d) if sent.iter().any(|t| t.contains(d)) => Ok(()),
        Some(d) => {
            bail!("the server named a directory this client's jobs never did ({d}): not written")
        }
    }
}

/// A file a server asks for (SENDFILE): fio's servers ask for the verify state file of a job
/// with `verify_state_load` (`local-JOB-N-verify.state` in the client's directory). fio's
/// client sends any file the server names; fiox's sends only such a state file from its
/// current directory (a server cannot read other files of this host): the bytes, or an errno.
pub(super) fn verify_state(path: &str) -> Result<Vec<u8>, i32> {
    if path.contains('/') || !path.ends_with("-verify.state") {
        fiox_guard::eprintln!(
            "fio: the server asked for {path}, which is not a verify state file in this \
             directory: refused"
        );
        return Err(libc::EACCES);
    }
    fiox_guard::input::read_bytes(Path::new(path), 1 << 30)
        .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_goes_only_where_the_clients_jobs_said() {
        let sent = vec!["[j]\nwrite_bw_log=/data/run\n".to_string()];
        assert!(allowed(Path::new("/data/run_bw.1.log.h"), &sent).is_ok());
        assert!(allowed(Path::new("run_bw.1.log.h"), &sent).is_ok());
        assert!(allowed(Path::new("/etc/cron.d/x.h"), &sent).is_err());
        assert!(allowed(Path::new("/data/../etc/x.h"), &sent).is_err());
    }

    #[test]
    fn a_server_gets_only_a_verify_state_file() {
        assert_eq!(verify_state("/etc/shadow"), Err(libc::EACCES));
        assert_eq!(verify_state("../x-verify.state"), Err(libc::EACCES));
        assert_eq!(verify_state("notes.txt"), Err(libc::EACCES));
        assert_eq!(
            verify_state("local-nothing-here-0-verify.state"),
            Err(libc::ENOENT)
        );
    }
}
