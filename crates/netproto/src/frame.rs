//! Messages on the wire: fio's 24-byte command header, payloads cut into fragments of at most
//! [`MAX_FRAGMENT`] bytes (all but the last flagged `MORE`), each fragment's header and payload
//! checked by CRC16 (CRC-16/ARC, fio's `crc16.c`).
//!
//! Reading is bounded: a fragment may claim at most [`MAX_FRAGMENT`] bytes (as fio checks), the
//! joined message at most [`MAX_MESSAGE`], and the buffer grows only by what has arrived. A
//! whole message must arrive within a time limit once its first byte has (a peer dripping
//! bytes cannot hold a connection forever).

use crate::{Opcode, ProtoError, MAX_FRAGMENT, MAX_MESSAGE, VERSION};
use std::io::{ErrorKind, Read, Write};
use std::time::{Duration, Instant};

/// Header size (`sizeof(struct fio_net_cmd)`).
pub const HEADER: usize = 24;
/// The header bytes the command CRC covers (all but the two CRCs).
const CRC_SPAN: usize = 20;
/// `FIO_NET_CMD_F_MORE`: another fragment of this message follows.
pub const F_MORE: u32 = 1;

static CRC16: crc::Crc<u16> = crc::Crc::<u16>::new(&crc::CRC_16_ARC);

/// fio's `fio_crc16`.
pub fn crc16(data: &[u8]) -> u16 {
    CRC16.checksum(data)
}

/// One whole message (its fragments joined).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub op: Opcode,
    /// The flags of the message (fio's `MORE` is internal to fragmenting and cleared).
    pub flags: u32,
    /// Passed back in the reply (PROBE, SEND_ETA, SENDFILE): the asker's cookie.
    pub tag: u64,
    pub payload: Vec<u8>,
}

impl Message {
    pub fn new(op: Opcode, tag: u64, payload: Vec<u8>) -> Message {
        Message {
            op,
            flags: 0,
            tag,
            payload,
        }
    }
}

/// The header of one fragment, as encoded.
fn header(op: u16, flags: u32, tag: u64, payload: &[u8]) -> [u8; HEADER] {
    let mut h = [0u8; HEADER];
    h[0..2].copy_from_slice(&VERSION.to_le_bytes());
    h[2..4].copy_from_slice(&op.to_le_bytes());
    h[4..8].copy_from_slice(&flags.to_le_bytes());
    h[8..16].copy_from_slice(&tag.to_le_bytes());
    h[16..20].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    let c = crc16(&h[..CRC_SPAN]);
    h[20..22].copy_from_slice(&c.to_le_bytes());
    h[22..24].copy_from_slice(&crc16(payload).to_le_bytes());
    h
}

/// A message as the bytes fio sends: one fragment per [`MAX_FRAGMENT`] bytes of payload (one
/// empty fragment for an empty payload).
pub fn encode(op: Opcode, flags: u32, tag: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + HEADER * (payload.len() / MAX_FRAGMENT + 1));
    let mut chunks = payload.chunks(MAX_FRAGMENT).peekable();
    if chunks.peek().is_none() {
        out.extend_from_slice(&header(op as u16, flags, tag, &[]));
        return out;
    }
    while let Some(c) = chunks.next() {
        let more = if chunks.peek().is_some() { F_MORE } else { 0 };
        out.extend_from_slice(&header(op as u16, flags | more, tag, c));
        out.extend_from_slice(c);
    }
    out
}

/// Write a message (all its fragments, in one write).
pub fn send(w: &mut dyn Write, m: &Message) -> std::io::Result<()> {
    w.write_all(&encode(m.op, m.flags, m.tag, &m.payload))?;
    w.flush()
}

/// A stream whose reads can be given a time limit (sockets; a test's pipe).
pub trait TimedRead: Read {
    /// Limit each following read to `t` (None: wait forever).
    fn set_limit(&mut self, t: Option<Duration>) -> std::io::Result<()>;
}

impl TimedRead for std::net::TcpStream {
    fn set_limit(&mut self, t: Option<Duration>) -> std::io::Result<()> {
        self.set_read_timeout(t)
    }
}

impl TimedRead for std::os::unix::net::UnixStream {
    fn set_limit(&mut self, t: Option<Duration>) -> std::io::Result<()> {
        self.set_read_timeout(t)
    }
}

impl TimedRead for &[u8] {
    fn set_limit(&mut self, _: Option<Duration>) -> std::io::Result<()> {
        Ok(())
    }
}

/// How long a reader waits: for the first byte of a message (None: as long as it takes) and
/// for the whole message once it has begun.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub idle: Option<Duration>,
    pub message: Duration,
    /// The largest message accepted: [`MAX_MESSAGE`] for what a server reads; a client
    /// accepts more from the servers it chose ([`MAX_CLIENT_MESSAGE`]: a job's logs).
    pub max_bytes: usize,
}

/// The largest message a client accepts (a log of every I/O can be large).
pub const MAX_CLIENT_MESSAGE: usize = 1 << 30;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            idle: None,
            message: Duration::from_secs(10),
            max_bytes: MAX_MESSAGE,
        }
    }
}

/// Reads messages from a stream, within [`Limits`].
pub struct Reader<R: TimedRead> {
    r: R,
    limits: Limits,
}

/// What a read found: a message, or the peer's orderly close between messages.
pub type Next = Option<Message>;

impl<R: TimedRead> Reader<R> {
    pub fn new(r: R, limits: Limits) -> Self {
        Reader { r, limits }
    }

    pub fn get_mut(&mut self) -> &mut R {
        &mut self.r
    }

    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// Fill `buf`; `started`: when the message began (None: not yet, the idle limit holds
    /// until the first byte). Ok(false): the peer closed before the first byte.
    fn fill(&mut self, buf: &mut [u8], started: &mut Option<Instant>) -> Result<bool, ProtoError> {
        let mut got = 0;
        while got < buf.len() {
            let limit = match started {
                None => self.limits.idle,
                Some(t0) => {
                    let left = self.limits.message.saturating_sub(t0.elapsed());
                    if left.is_zero() {
                        return Err(ProtoError::Timeout(self.limits.message));
                    }
                    Some(left)
                }
            };
            self.r.set_limit(limit)?;
            match self.r.read(&mut buf[got..]) {
                Ok(0) if started.is_none() && got == 0 => return Ok(false),
                Ok(0) => return Err(ProtoError::Truncated),
                Ok(n) => {
                    got += n;
                    started.get_or_insert_with(Instant::now);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return Err(ProtoError::Timeout(match started {
                        None => self.limits.idle.unwrap_or_default(),
                        Some(_) => self.limits.message,
                    }))
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(true)
    }

    /// The next whole message (None: the peer closed the connection between messages).
    pub fn read_message(&mut self) -> Result<Next, ProtoError> {
        let mut started = None;
        let mut msg: Option<Message> = None;
        loop {
            let mut h = [0u8; HEADER];
            if !self.fill(&mut h, &mut started)? {
                return Ok(None);
            }
            let (op, flags, tag, len, pdu_crc) = check_header(&h)?;
            if msg.as_ref().map_or(0, |m| m.payload.len()) + len > self.limits.max_bytes {
                return Err(ProtoError::MessageTooLong(self.limits.max_bytes));
            }
            let m = msg.get_or_insert_with(|| Message {
                op,
                flags: flags & !F_MORE,
                tag,
                payload: Vec::new(),
            });
            if m.op != op {
                return Err(ProtoError::FragmentMismatch {
                    first: m.op as u16,
                    then: op as u16,
                });
            }
            // At most one fragment (1 KiB) is allocated ahead of the bytes that fill it.
            let at = m.payload.len();
            m.payload.resize(at + len, 0);
            let mut frag = std::mem::take(&mut m.payload);
            self.fill(&mut frag[at..], &mut started)?;
            let computed = crc16(&frag[at..]);
            if computed != pdu_crc {
                return Err(ProtoError::PayloadCrc {
                    op: op.name().to_string(),
                    sent: pdu_crc,
                    computed,
                });
            }
            let m = msg.as_mut().expect("set above");
            m.payload = frag;
            if flags & F_MORE == 0 {
                return Ok(msg);
            }
        }
    }
}

/// Check one fragment's header: CRC, version, length, opcode (in fio's order: the CRC first,
/// so that a garbled version is reported as garbled).
fn check_header(h: &[u8; HEADER]) -> Result<(Opcode, u32, u64, usize, u16), ProtoError> {
    let u16_at = |i: usize| u16::from_le_bytes([h[i], h[i + 1]]);
    let sent = u16_at(20);
    let computed = crc16(&h[..CRC_SPAN]);
    if sent != computed {
        return Err(ProtoError::HeaderCrc { sent, computed });
    }
    let version = u16_at(0);
    if version != VERSION {
        return Err(ProtoError::Version {
            got: version,
            want: VERSION,
        });
    }
    let len = u32::from_le_bytes([h[16], h[17], h[18], h[19]]);
    if len as usize > MAX_FRAGMENT {
        return Err(ProtoError::FragmentTooLong { len });
    }
    let op_n = u16_at(2);
    let op = Opcode::from_u16(op_n).ok_or(ProtoError::UnknownOpcode(op_n))?;
    let flags = u32::from_le_bytes([h[4], h[5], h[6], h[7]]);
    let tag = u64::from_le_bytes(h[8..16].try_into().expect("8 bytes"));
    Ok((op, flags, tag, len as usize, u16_at(22)))
}

/// Decode every message in `bytes` (a capture, a fuzzer's input): the messages read before
/// the first error, and that error (None: the bytes ended between messages).
pub fn decode_all(bytes: &[u8]) -> (Vec<Message>, Option<ProtoError>) {
    let mut r = Reader::new(bytes, Limits::default());
    let mut out = Vec::new();
    loop {
        match r.read_message() {
            Ok(Some(m)) => out.push(m),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}

#[cfg(test)]
mod tests;
