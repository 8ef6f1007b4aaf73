//! fio's `log_compression`: a job's bw/iops/lat/histogram logs are kept in memory instead of being
//! written as they come; each time a log has gathered `log_compression` bytes, that chunk is
//! handed to the job's log compression thread, which zlib-compresses it and keeps it. At the
//! job's end each log takes its compressed chunks back: inflated into the text log, or, with
//! `log_store_compressed`, stored as they are (consecutive zlib streams of fio's binary
//! samples: a `.log.fz` file). The thread is pinned to `log_compression_cpus` when given, as
//! fio pins its compression workqueue, so the compression work stays off the CPUs doing I/O.

use flate2::write::ZlibEncoder;
use flate2::Compression;
use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;

/// The name of the compression thread (as `/proc/<pid>/task/<tid>/comm` shows it).
pub const THREAD_NAME: &str = "fiox-logzip";

/// Most memory a chunk buffer reserves ahead: a chunk may be as large as `log_compression`
/// allows (i64::MAX), so its buffer grows as lines arrive instead of being allocated whole.
const RESERVE_MAX: usize = 1 << 20;

/// Work for the compression thread.
enum Msg {
    /// A full (or the last) chunk of log `log` to compress.
    Chunk { log: usize, bytes: Vec<u8> },
    /// Hand back log `log`'s compressed chunks, in order.
    Take {
        log: usize,
        reply: Sender<io::Result<Vec<Vec<u8>>>>,
    },
}

/// One job's log compression thread.
pub struct Compressor {
    tx: Option<Sender<Msg>>,
    thread: Option<JoinHandle<()>>,
    next_log: usize,
}

impl std::fmt::Debug for Compressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compressor")
            .field("logs", &self.next_log)
            .finish()
    }
}

impl Compressor {
    /// Starts the thread, pinned to `cpus` when given; fails when it cannot be started or
    /// pinned (a CPU that does not exist or is not allowed to this process).
    pub fn start(cpus: Option<&[usize]>) -> io::Result<Compressor> {
        let (tx, rx) = mpsc::channel();
        let (ready_tx, ready_rx) = mpsc::channel();
        let cpus = cpus.map(<[usize]>::to_vec);
        let thread = std::thread::Builder::new()
            .name(THREAD_NAME.into())
            .spawn(move || {
                let pinned = cpus.as_deref().map_or(Ok(()), crate::sys::set_affinity);
                let ok = pinned.is_ok();
                // The starter waits for this; if it is gone there is nothing to do.
                if ready_tx.send(pinned).is_ok() && ok {
                    serve(rx);
                }
            })?;
        let started = ready_rx
            .recv()
            .unwrap_or_else(|_| Err(io::Error::other("the thread ended as it started")));
        match started {
            Ok(()) => Ok(Compressor {
                tx: Some(tx),
                thread: Some(thread),
                next_log: 0,
            }),
            Err(e) => {
                // The thread returns right after reporting the failure.
                let _ = thread.join();
                Err(e)
            }
        }
    }

    /// A sink for one more log: what is written to it is cut into chunks of `chunk` bytes
    /// (at least 1) and compressed by this thread.
    pub fn sink(&mut self, chunk: usize) -> ChunkSink {
        self.next_log += 1;
        ChunkSink {
            tx: self.tx.clone(),
            log: self.next_log,
            chunk: chunk.max(1),
            buf: Vec::new(),
        }
    }

    /// No more sinks: the thread ends when the last sink is finished or dropped.
    pub fn close(&mut self) {
        self.tx = None;
    }
}

impl Drop for Compressor {
    /// Waits for the thread; the owner drops its sinks first (a sink still alive would keep
    /// the thread waiting for work).
    fn drop(&mut self) {
        self.close();
        if let Some(t) = self.thread.take() {
            // A panic in the thread was already reported to the sinks as a lost thread.
            let _ = t.join();
        }
    }
}

/// The thread's loop: compress chunks as they come, hand them back on request.
fn serve(rx: Receiver<Msg>) {
    let mut done: HashMap<usize, io::Result<Vec<Vec<u8>>>> = HashMap::new();
    for m in rx {
        match m {
            Msg::Chunk { log, bytes } => {
                let entry = done.entry(log).or_insert_with(|| Ok(Vec::new()));
                if let Ok(chunks) = entry {
                    match compress(&bytes) {
                        Ok(z) => chunks.push(z),
                        Err(e) => *entry = Err(e),
                    }
                }
            }
            Msg::Take { log, reply } => {
                let chunks = done.remove(&log).unwrap_or_else(|| Ok(Vec::new()));
                // A sink that stopped waiting has nothing to receive.
                let _ = reply.send(chunks);
            }
        }
    }
}

fn compress(bytes: &[u8]) -> io::Result<Vec<u8>> {
    let mut z = ZlibEncoder::new(Vec::with_capacity(bytes.len() / 4), Compression::default());
    z.write_all(bytes)?;
    z.finish()
}

fn thread_gone() -> io::Error {
    io::Error::other("the log compression thread is gone")
}

/// Where one log's bytes go while the job runs: a chunk buffer in front of the compression
/// thread.
pub struct ChunkSink {
    tx: Option<Sender<Msg>>,
    log: usize,
    chunk: usize,
    buf: Vec<u8>,
}

impl ChunkSink {
    fn send(&mut self) -> io::Result<()> {
        let next = Vec::with_capacity(self.chunk.min(RESERVE_MAX));
        let bytes = std::mem::replace(&mut self.buf, next);
        let tx = self.tx.as_ref().ok_or_else(thread_gone)?;
        tx.send(Msg::Chunk {
            log: self.log,
            bytes,
        })
        .map_err(|_| thread_gone())
    }

    /// The compressed chunks of everything written, in order, the last partial chunk
    /// included; the sink is finished after this.
    pub fn take(&mut self) -> io::Result<Vec<Vec<u8>>> {
        if !self.buf.is_empty() {
            self.send()?;
        }
        let tx = self.tx.take().ok_or_else(thread_gone)?;
        let (reply, answer) = mpsc::channel();
        tx.send(Msg::Take {
            log: self.log,
            reply,
        })
        .map_err(|_| thread_gone())?;
        answer.recv().map_err(|_| thread_gone())?
    }
}

impl Write for ChunkSink {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.buf.capacity() == 0 {
            self.buf.reserve_exact(self.chunk.min(RESERVE_MAX));
        }
        let n = (self.chunk - self.buf.len()).min(data.len());
        self.buf.extend_from_slice(&data[..n]);
        if self.buf.len() == self.chunk {
            self.send()?;
        }
        Ok(n)
    }

    /// Flushing does not cut a chunk: chunks are `log_compression` bytes, as fio's.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn inflate(chunks: &[Vec<u8>]) -> Vec<u8> {
        let mut all = Vec::new();
        for c in chunks {
            flate2::read::ZlibDecoder::new(&c[..])
                .read_to_end(&mut all)
                .unwrap();
        }
        all
    }

    #[test]
    fn chunks_come_back_in_order_per_log() {
        let mut z = Compressor::start(None).unwrap();
        let (mut a, mut b) = (z.sink(1000), z.sink(7));
        let text: Vec<u8> = (0..5000u32)
            .flat_map(|i| format!("{i}, 1\n").into_bytes())
            .collect();
        for piece in text.chunks(333) {
            a.write_all(piece).unwrap();
            b.write_all(&piece[..10]).unwrap();
        }
        let ca = a.take().unwrap();
        assert_eq!(ca.len(), text.len().div_ceil(1000));
        assert_eq!(inflate(&ca), text);
        let cb = b.take().unwrap();
        assert_eq!(inflate(&cb).len(), text.chunks(333).count() * 10);
        z.close();
        drop(z);
    }

    /// A log that never finished (an error on the way) does not keep the thread waiting
    /// once it is dropped.
    #[test]
    fn an_unfinished_sink_does_not_hang_the_end() {
        let mut z = Compressor::start(None).unwrap();
        let mut s = z.sink(16);
        s.write_all(&[7; 100]).unwrap();
        z.close();
        drop(s);
        drop(z);
    }

    /// log_compression's largest value: the buffer grows with the data, not to the chunk.
    #[test]
    fn a_huge_chunk_is_not_allocated_up_front() {
        let mut z = Compressor::start(None).unwrap();
        let mut s = z.sink(i64::MAX as usize);
        s.write_all(b"1, 2, 0, 4096, 0\n").unwrap();
        assert!(s.buf.capacity() <= RESERVE_MAX);
        assert_eq!(inflate(&s.take().unwrap()), b"1, 2, 0, 4096, 0\n");
    }

    #[test]
    fn a_cpu_that_does_not_exist_is_an_error() {
        let e = Compressor::start(Some(&[4000])).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
    }
}
