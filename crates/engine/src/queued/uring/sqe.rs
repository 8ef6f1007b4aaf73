//! The batch path's SQEs: a read or write written field by field straight into the ring
//! (`Sqe`, the kernel's ABI), what the crate's builders would make (checked byte for byte by
//! `direct_sqes_match_the_crates_builders`), and the registered buffer pool's indexes.

use io_uring::{opcode, squeue};

use super::opt_err;
use crate::target::{target, Target};
use crate::{EngineError, IoOp, IoUnit};

/// The kernel's `struct io_uring_sqe` (64 bytes, its ABI) with the fields a read or write
/// uses: the batch path writes these directly instead of through the crate's builders (which
/// zero and fill an entry field by field behind an enum of targets: about 60 instructions per
/// I/O against about 15). `squeue::Entry` is a `repr(C)` wrapper of the same struct; the test
/// `direct_sqes_match_the_crates_builders` compares them byte for byte.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(super) struct Sqe {
    opcode: u8,
    flags: u8,
    ioprio: u16,
    fd: i32,
    off: u64,
    addr: u64,
    len: u32,
    rw_flags: i32,
    user_data: u64,
    buf_index: u16,
    personality: u16,
    file_index: u32,
    addr3: u64,
    pad: u64,
}

const _: () = assert!(std::mem::size_of::<Sqe>() == std::mem::size_of::<squeue::Entry>());
const _: () = assert!(std::mem::size_of::<Sqe>() == 64);

impl Sqe {
    pub(super) fn entry(self) -> squeue::Entry {
        // SAFETY: `squeue::Entry` is `repr(C)` over the kernel's 64-byte io_uring_sqe, whose
        // layout `Sqe` repeats (sizes asserted above, bytes compared in a test); every bit
        // pattern of these integer fields is a valid SQE value.
        unsafe { std::mem::transmute::<Sqe, squeue::Entry>(self) }
    }
}

/// What the SQEs of one batch share: the registered buffer pool with `fixedbufs`,
/// registered files, the rw flags. Only for fixed buffers or non-vectored
/// I/O (vectored I/O needs an iovec slot per unit: `rw_entry`).
#[derive(Clone, Copy)]
pub(super) struct SqeCfg {
    pub(super) fixed: Option<FixedBufs>,
    pub(super) registerfiles: bool,
    pub(super) rw_flags: i32,
}

impl SqeCfg {
    /// The SQE of read or write `io` as unit `id`, written field by field (what `rw_entry`
    /// builds through the crate's builders).
    #[inline(always)]
    pub(super) fn sqe(&self, id: u32, files: &[Target], io: &IoUnit) -> Result<Sqe, EngineError> {
        let read = match io.op {
            IoOp::Read => true,
            IoOp::Write => false,
            op => return Err(crate::not_a_read_or_write("io_uring", op)),
        };
        let t = target("io_uring", files, io.file)?;
        self.rw(id, read, (io.file, t.fd), io.offset, io.buf(), io.ioprio)
    }

    /// The SQE of a read or write of `buf` (address and length proven together) at `offset`,
    /// as unit `id`, on file `(index, fd)` (the index with registered files, else the
    /// descriptor).
    #[inline(always)]
    pub(super) fn rw(
        &self,
        id: u32,
        read: bool,
        (index, fd): (u32, i32),
        offset: u64,
        buf: crate::BufSpan,
        ioprio: u16,
    ) -> Result<Sqe, EngineError> {
        let (addr, len) = (buf.as_ptr() as usize, buf.len());
        let (opcode, buf_index) = match &self.fixed {
            Some(b) => {
                let op = if read {
                    opcode::ReadFixed::CODE
                } else {
                    opcode::WriteFixed::CODE
                };
                (op, b.index(addr, len)?)
            }
            None if read => (opcode::Read::CODE, 0),
            None => (opcode::Write::CODE, 0),
        };
        let (fd, flags) = if self.registerfiles {
            (index as i32, squeue::Flags::FIXED_FILE.bits())
        } else {
            (fd, 0)
        };
        Ok(Sqe {
            opcode,
            flags,
            ioprio,
            fd,
            off: offset,
            addr: addr as u64,
            len,
            rw_flags: self.rw_flags,
            user_data: id as u64,
            buf_index,
            ..Sqe::default()
        })
    }
}

/// The registered buffer pool: `chunk`-sized iovecs starting at `base`.
#[derive(Clone, Copy)]
pub(super) struct FixedBufs {
    pub(super) base: usize,
    pub(super) end: usize,
    pub(super) chunk: usize,
    /// The whole pool is one registered buffer (every pool under 1 GiB): its index is 0 and
    /// the per-I/O division by `chunk` is not needed.
    pub(super) single: bool,
}

impl FixedBufs {
    /// Index of the registered buffer holding `[a, a+len)`.
    #[inline(always)]
    pub(super) fn index(&self, a: usize, len: u32) -> Result<u16, EngineError> {
        if a < self.base || a + len as usize > self.end {
            return Err(opt_err(
                "fixedbufs",
                "buffer outside the registered pool".into(),
            ));
        }
        if self.single {
            return Ok(0);
        }
        Ok(((a - self.base) / self.chunk) as u16)
    }
}

/// `fixedbufs` before the pool was registered.
pub(super) fn not_registered() -> EngineError {
    opt_err(
        "fixedbufs",
        "the buffer pool was not registered (register_buffers not called)".into(),
    )
}
