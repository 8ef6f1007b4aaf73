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
    let next_to = std::path::Path::new(path)
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    // --aux-path: fio's dumps go there.
    let dir = aux.as_deref().unwrap_or(next_to);
    // Named by fiox next to the data file: a user's file of that name or a symbolic link
    // there is left alone (see safeopen::create_output).
    match v.dump_with(dir, path, block, f, &crate::safeopen::create_output) {
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
    /// Start `n` checking threads sharing `v`.
    pub fn start(n: u32, v: Arc<Verifier>, dump: Dump) -> std::io::Result<AsyncChecks> {
        let (tx, rx) = mpsc::sync_channel::<Work>(n as usize * 4);
        let (ftx, answers) = mpsc::channel();
        let rx = Arc::new(Mutex::new(rx));
        let mut workers = Vec::with_capacity(n as usize);
        for i in 0..n {
            let (rx, ftx, v) = (Arc::clone(&rx), ftx.clone(), Arc::clone(&v));
            let dump = dump.clone();
            let h = std::thread::Builder::new()
                .name(format!("fiox-verify-{i}"))
                .spawn(move || check_loop(&rx, &ftx, &v, &dump))?;
            workers.push(h);
        }
        Ok(AsyncChecks {
            tx: Some(tx),
            answers,
            outstanding: 0,
            workers,
        })
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
