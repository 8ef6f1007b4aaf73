//! `netsplice`'s data path (fio's engines/net.c with use_splice): received TCP data is spliced
//! from the socket into a pipe and copied out into the buffer; data to send is vmspliced from
//! the buffer into the pipe and spliced from there into the socket.

use std::os::fd::RawFd;

use crate::sys::errno;
use crate::BufSpan;

/// Socket -> pipe -> buffer: bytes received, 0 at the peer's end, or `-errno`.
pub(crate) fn input(pipe: [RawFd; 2], sock: RawFd, span: BufSpan) -> i64 {
    let (buf, len) = (span.as_ptr(), span.len() as usize);
    // SAFETY: plain syscall on our fds; no offsets (sockets and pipes have none).
    let n = unsafe {
        libc::splice(
            sock,
            std::ptr::null_mut(),
            pipe[1],
            std::ptr::null_mut(),
            len,
            libc::SPLICE_F_MOVE,
        )
    };
    if n <= 0 {
        return if n < 0 { -(errno() as i64) } else { 0 };
    }
    let mut done = 0usize;
    while done < n as usize {
        // SAFETY: done + (n - done) <= len bytes of the unit's buffer.
        let r = unsafe { libc::read(pipe[0], buf.add(done).cast(), n as usize - done) };
        if r <= 0 {
            return if r < 0 {
                -(errno() as i64)
            } else {
                -(libc::EIO as i64)
            };
        }
        done += r as usize;
    }
    n as i64
}

/// Buffer -> pipe -> socket: bytes sent or `-errno`.
pub(crate) fn out(pipe: [RawFd; 2], sock: RawFd, span: BufSpan) -> i64 {
    let (buf, len) = (span.as_ptr(), span.len() as usize);
    let iov = libc::iovec {
        iov_base: buf.cast(),
        iov_len: len,
    };
    // SAFETY: one iovec over the unit's live buffer; the kernel only reads it.
    let n = unsafe { libc::vmsplice(pipe[1], &iov, 1, 0) };
    if n < 0 {
        return -(errno() as i64);
    }
    let mut left = n as usize;
    while left > 0 {
        // SAFETY: plain syscall on our fds.
        let r = unsafe {
            libc::splice(
                pipe[0],
                std::ptr::null_mut(),
                sock,
                std::ptr::null_mut(),
                left,
                libc::SPLICE_F_MOVE,
            )
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
    n as i64
}
