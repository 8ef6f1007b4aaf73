//! `verify_async=N`: N threads check the blocks a job reads back, so the job's own thread only
//! reads (fio's verify offload). Each block is copied into the queue (the I/O buffer is reused
//! at once); failures come back as descriptions and are counted by the job when it next looks,
//! so with `verify_fatal` the job stops a few blocks after the bad one, as fio does.

use fiox_verify::{Expect, Verifier, VerifyFailure};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Which write a block must hold.
#[derive(Debug, Clone, Copy)]
pub enum Want {
    /// Any write of this job (a read-only job checking earlier data).
    Any,
    /// This write (a whole run of the write log: every interval carries its sequence number).
    Seq(u64),
}

struct Work {
    path: Arc<str>,
    offset: u64,
    data: Vec<u8>,
    want: Want,
}

/// The checking threads of one job.
pub struct AsyncChecks {
    tx: Option<SyncSender<Work>>,
    /// One answer per block: its failure, or None when it was intact.
    answers: Receiver<Option<String>>,
    /// Blocks queued and not yet answered.
    outstanding: usize,
    workers: Vec<JoinHandle<()>>,
}

/// `"{file}: {failure}"`, plus where `verify_dump` put the received and expected copies
/// (next to the data file, as fio does).
pub fn describe(v: &Verifier, dump: &Dump, path: &str, block: &[u8], f: &VerifyFailure) -> String {
    let Some(aux) = dump else {
        return format!("{path}: {f}");
    };
    // A device's blocks are not dumped into /dev (fio would: 188 files in one run there):
    // they go to the working directory, as a file's dumps go next to it.
    let is_file = std::fs::metadata(path).is_ok_and(|m| m.is_file());
    let next_to = std::path::Path::new(path)
        .parent()
        .filter(|d| is_file && !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    // --aux-path: fio's dumps go there.
    let dir = aux.as_deref().unwrap_or(next_to);
    // Named by fiox next to the data file: a user's file of that name or a symbolic link
    // there is left alone (see safeopen::create_output).
    match v.dump_with(dir, path, block, f, &crate::files::safeopen::create_output) {
        Ok(d) => format!(
            "{path}: {f} (dumped to {}{})",
            d.received.display(),
            d.expected
                .map(|e| format!(" and {}", e.display()))
                .unwrap_or_default()
        ),
        Err(e) => format!("{path}: {f} (verify_dump failed: {e})"),
    }
}

/// `verify_dump`: None = off; Some(None) = next to the data file; Some(Some(dir)) = in the
/// `--aux-path` directory.
pub type Dump = Option<Option<std::path::PathBuf>>;

/// The job's [`Dump`].
pub fn dump_of(job: &fiox_job::JobSpec) -> Dump {
    job.verify
        .verify_dump
        .then(|| job.aux_path.as_ref().map(std::path::PathBuf::from))
}

impl AsyncChecks {
    /// Start `n` checking threads sharing `v`, each restricted to `cpus` when given
    /// (`verify_async_cpus`); fails when a thread cannot start or take that affinity.
    pub fn start(
        n: u32,
        v: Arc<Verifier>,
        dump: Dump,
        cpus: Option<&[usize]>,
    ) -> std::io::Result<AsyncChecks> {
        let (tx, rx) = mpsc::sync_channel::<Work>(n as usize * 4);
        let (ftx, answers) = mpsc::channel();
        let (ready_tx, ready) = mpsc::channel::<std::io::Result<()>>();
        let rx = Arc::new(Mutex::new(rx));
        let mut checks = AsyncChecks {
            tx: Some(tx),
            answers,
            outstanding: 0,
            workers: Vec::with_capacity(n as usize),
        };
        for i in 0..n {
            let (rx, ftx, v) = (Arc::clone(&rx), ftx.clone(), Arc::clone(&v));
            let (dump, cpus, ready_tx) =
                (dump.clone(), cpus.map(<[usize]>::to_vec), ready_tx.clone());
            let h = std::thread::Builder::new()
                .name(format!("fiox-verify-{i}"))
                .spawn(move || {
                    let pinned = cpus.map_or(Ok(()), |c| crate::sys::set_affinity(&c));
                    let ok = pinned.is_ok();
                    let _ = ready_tx.send(pinned);
                    // The starter waits for every thread's answer, never for this sender.
                    drop(ready_tx);
                    if ok {
                        check_loop(&rx, &ftx, &v, &dump);
                    }
                })?;
            checks.workers.push(h);
        }
        drop(ready_tx);
        // Dropping `checks` on an error joins the threads already started.
        for r in ready.iter() {
            r.map_err(|e| std::io::Error::new(e.kind(), format!("verify_async_cpus: {e}")))?;
        }
        Ok(checks)
    }

    /// Queue a copy of `data`, read at `offset` of `path`, for checking.
    pub fn submit(&mut self, path: &str, offset: u64, data: &[u8], want: Want) {
        if let Some(tx) = &self.tx {
            self.outstanding += 1;
            let w = Work {
                path: Arc::from(path),
                offset,
                data: data.to_vec(),
                want,
            };
            // A send fails only when every worker is gone (they never exit early).
            let _ = tx.send(w);
        }
    }

    /// Failures found so far (without waiting).
    pub fn found(&mut self) -> Vec<String> {
        let answers: Vec<Option<String>> = self.answers.try_iter().collect();
        self.outstanding -= answers.len();
        answers.into_iter().flatten().collect()
    }

    /// Wait until every queued block is checked; the failures not yet taken. The threads stay
    /// for later blocks.
    pub fn finish(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        while self.outstanding > 0 {
            match self.answers.recv() {
                Ok(a) => {
                    self.outstanding -= 1;
                    out.extend(a);
                }
                // Every worker is gone (one panicked): nothing more will come.
                Err(_) => break,
            }
        }
        out
    }
}

impl Drop for AsyncChecks {
    fn drop(&mut self) {
        self.tx = None;
        for h in self.workers.drain(..) {
            let _ = h.join();
        }
    }
}

fn check_loop(
    rx: &Mutex<Receiver<Work>>,
    out: &mpsc::Sender<Option<String>>,
    v: &Verifier,
    dump: &Dump,
) {
    loop {
        let next = rx.lock().unwrap_or_else(|p| p.into_inner()).recv();
        let Ok(w) = next else { return };
        let expect = match w.want {
            Want::Any => Expect::Any,
            Want::Seq(s) => Expect::Seq(s),
        };
        let answer = v
            .check(&w.data, w.offset, expect)
            .err()
            .map(|f| describe(v, dump, &w.path, &w.data, &f));
        let _ = out.send(answer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verifier() -> Arc<Verifier> {
        let mut job = fiox_job::JobSpec::default();
        job.verify.method = fiox_job::VerifyMethod::Crc32c;
        Arc::new(Verifier::new(&job.verify, 0, 1).unwrap())
    }

    /// The `Cpus_allowed_list` of each live thread of this process named `fiox-verify-*`.
    fn verify_thread_cpus() -> Vec<String> {
        let mut out = Vec::new();
        for t in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
            let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
            if !comm.starts_with("fiox-verify-") {
                continue;
            }
            let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
            let list = status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"));
            out.extend(list.map(|l| l.trim().to_string()));
        }
        out
    }

    /// verify_async_cpus pins the checking threads (and only them: the caller keeps its own).
    #[test]
    fn verify_async_cpus_pins_the_checking_threads() {
        let cpu = std::thread::available_parallelism().map_or(1, |n| n.get()) - 1;
        let before = std::fs::read_to_string("/proc/thread-self/status").unwrap();
        let checks = AsyncChecks::start(2, verifier(), None, Some(&[cpu])).unwrap();
        let pinned = verify_thread_cpus()
            .iter()
            .filter(|l| **l == cpu.to_string())
            .count();
        assert!(pinned >= 2, "{:?}", verify_thread_cpus());
        drop(checks);
        let after = std::fs::read_to_string("/proc/thread-self/status").unwrap();
        let allowed = |s: &str| {
            s.lines()
                .find(|l| l.starts_with("Cpus_allowed_list"))
                .map(String::from)
        };
        assert_eq!(allowed(&before), allowed(&after));
    }

    /// A CPU the system cannot address is an error naming the option, as fio fails the job.
    #[test]
    fn verify_async_cpus_beyond_the_system_fails() {
        let e = AsyncChecks::start(1, verifier(), None, Some(&[1 << 20]))
            .err()
            .expect("an impossible CPU must fail");
        assert!(e.to_string().contains("verify_async_cpus"), "{e}");
    }
}
