//! fio's `splice` engine: data moves between the file and the I/O buffer through a pipe, as
//! fio's engines/splice.c. A read splices up to 64 KiB at a time from the file into the pipe
//! and copies it out into the buffer; a write vmsplices the buffer into the pipe (waiting for
//! room) and splices the pipe into the file at the unit's offset. Trims and syncs are the
//! plain calls. Synchronous, like fio's; a unit completes with its length or `-errno`.
//!
//! fio first tries vmsplice(2) from the pipe into a private mapping over the buffer for reads;
//! on current kernels that is a copy, which is what read(2) from the pipe does here.

use std::os::fd::RawFd;

use crate::sys::errno;
use crate::target::{run_positional, FdOp, Target};
use crate::{EngineError, IoOp, IoUnit};

/// fio's SPLICE_DEF_SIZE: the most one splice call moves.
const CHUNK: usize = 64 << 10;

pub(crate) struct SpliceEngine {
    /// The pipe: [read end, write end].
    pipe: [RawFd; 2],
}

impl SpliceEngine {
    pub fn new() -> Result<SpliceEngine, EngineError> {
        let mut p = [-1; 2];
        // SAFETY: pipe2 writes two fds into the array it is given.
        if unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
            return Err(EngineError::Os {
                engine: "splice",
                what: "pipe".into(),
                source: std::io::Error::last_os_error(),
            });
        }
        Ok(SpliceEngine { pipe: p })
    }

    /// File -> pipe -> buffer, chunk by chunk.
    fn read(&self, fd: RawFd, io: &IoUnit) -> i64 {
        let mut off = io.offset as libc::off_t;
        let mut done = 0usize;
        let len = io.buf().len() as usize;
        while done < len {
            let want = (len - done).min(CHUNK);
            let flags = if len - done > CHUNK {
                libc::SPLICE_F_MORE
            } else {
                0
            };
            // SAFETY: plain syscall on our fds; `off` is a live off_t the kernel advances.
            let n = unsafe {
                libc::splice(
                    fd,
                    &mut off,
                    self.pipe[1],
                    std::ptr::null_mut(),
                    want,
                    flags,
                )
            };
            if n < 0 {
                match errno() {
                    libc::EAGAIN | libc::ENODATA => continue,
                    e => return -(e as i64),
                }
            }
            if n == 0 {
                break; // end of file: a short read, as pread would give
            }
            let mut left = n as usize;
            while left > 0 {
                // SAFETY: the destination lies inside the unit's buffer (done + left <= len).
                let r =
                    unsafe { libc::read(self.pipe[0], io.buf().as_ptr().add(done).cast(), left) };
                if r <= 0 {
                    return if r < 0 {
                        -(errno() as i64)
                    } else {
                        -(libc::EIO as i64)
                    };
                }
                left -= r as usize;
                done += r as usize;
            }
        }
        done as i64
    }

    /// Buffer -> pipe (vmsplice) -> file (splice at the offset).
    fn write(&self, fd: RawFd, io: &IoUnit) -> i64 {
        let mut off = io.offset as libc::off_t;
        let mut done = 0usize;
        let len = io.buf().len() as usize;
        while done < len {
            let mut pfd = libc::pollfd {
                fd: self.pipe[1],
                events: libc::POLLOUT,
                revents: 0,
            };
            // SAFETY: one pollfd, valid for the call.
            if unsafe { libc::poll(&mut pfd, 1, -1) } < 0 {
                return -(errno() as i64);
            }
            let iov = libc::iovec {
                // SAFETY: within the unit's buffer (done < len).
                iov_base: unsafe { io.buf().as_ptr().add(done) }.cast(),
                iov_len: len - done,
            };
            // SAFETY: one iovec over the live buffer; the kernel only reads it.
            let n = unsafe { libc::vmsplice(self.pipe[1], &iov, 1, libc::SPLICE_F_NONBLOCK) };
            if n < 0 {
                match errno() {
                    libc::EAGAIN => continue,
                    e => return -(e as i64),
                }
            }
            let mut left = n as usize;
            while left > 0 {
                // SAFETY: plain syscall on our fds; `off` is a live off_t the kernel advances.
                let r = unsafe {
                    libc::splice(self.pipe[0], std::ptr::null_mut(), fd, &mut off, left, 0)
                };
                if r <= 0 {
                    return if r < 0 {
                        -(errno() as i64)
                    } else {
                        -(libc::EIO as i64)
                    };
                }
                left -= r as usize;
            }
            done += n as usize;
        }
        done as i64
    }
}

impl Drop for SpliceEngine {
    fn drop(&mut self) {
        for fd in self.pipe {
            // SAFETY: the pipe's fds are ours and closed only here.
            unsafe { libc::close(fd) };
        }
    }
}

impl FdOp for SpliceEngine {
    const NAME: &'static str = "splice";

    fn run(&mut self, t: Target, io: &IoUnit) -> i64 {
        match io.op {
            IoOp::Read => self.read(t.fd, io),
            IoOp::Write => self.write(t.fd, io),
            _ => run_positional(t, io, 0),
        }
    }
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::on_scratch_file;
    use crate::{BufPool, IoEngine, Queued};

    #[test]
    fn writes_and_reads_through_the_pipe() {
        let (mut e, f, p) = on_scratch_file(SpliceEngine::new().unwrap(), "splice");
        // 200 KiB: more than a pipe holds and more than one splice chunk.
        let len = 200 << 10;
        let pool = BufPool::new(2, len, 4096).unwrap();
        let (w, r) = (pool.slot(0), pool.slot(1));
        for i in 0..len {
            // SAFETY: slot 0 has len bytes.
            unsafe { *w.as_ptr().add(i) = (i % 251) as u8 };
        }
        let unit = |op, buf| IoUnit::transfer(op, 0, 4096, buf);
        assert_eq!(
            e.queue(0, &unit(IoOp::Write, w)).unwrap(),
            Queued::Done(len as i64)
        );
        let data = std::fs::read(&p).unwrap();
        assert_eq!(data.len(), 4096 + len);
        assert!(data[4096..]
            .iter()
            .enumerate()
            .all(|(i, &b)| b == (i % 251) as u8));
        assert_eq!(
            e.queue(0, &unit(IoOp::Read, r)).unwrap(),
            Queued::Done(len as i64)
        );
        // SAFETY: slot 1 has len bytes, just filled by the read.
        let got = unsafe { std::slice::from_raw_parts(r.as_ptr(), len) };
        assert_eq!(got, &data[4096..]);
        // A read past the end is short, as pread's.
        let mut past = unit(IoOp::Read, r);
        past.offset = (4096 + len - 1000) as u64;
        assert_eq!(e.queue(0, &past).unwrap(), Queued::Done(1000));
        drop(f);
        std::fs::remove_file(&p).unwrap();
    }
}
