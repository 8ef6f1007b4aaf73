//! Little-endian fields as fio's structures hold them on the wire: integers, fio's `fio_fp64_t`
//! (an IEEE 754 double in a 16-byte slot), fixed-size NUL-padded strings. The reader checks
//! every bound, so a short or hostile payload is an error, never a panic.

use crate::ProtoError;

/// Builds a payload field by field.
#[derive(Debug, Default)]
pub struct Put {
    pub buf: Vec<u8>,
}

impl Put {
    pub fn with_capacity(n: usize) -> Put {
        Put {
            buf: Vec::with_capacity(n),
        }
    }
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    pub fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64s(&mut self, vs: &[u64]) {
        for v in vs {
            self.u64(*v);
        }
    }
    /// fio's `fio_fp64_t`: the double's IEEE 754 bits (what fio's pack754 gives for every
    /// finite value fio sends), then 8 bytes of the union's filler. Not-a-number and
    /// infinities, which fio never sends, go as 0.
    pub fn fp64(&mut self, v: f64) {
        self.u64(if v.is_finite() { v.to_bits() } else { 0 });
        self.zeros(8);
    }
    /// A fixed `char[n]`: the text cut to leave room for a NUL, zero-padded.
    pub fn text(&mut self, s: &str, n: usize) {
        let b = s.as_bytes();
        let k = b.len().min(n.saturating_sub(1));
        self.buf.extend_from_slice(&b[..k]);
        self.zeros(n - k);
    }
    pub fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }
    pub fn zeros(&mut self, n: usize) {
        self.buf.resize(self.buf.len() + n, 0);
    }
    /// Zero-pad up to a multiple of `a` (the C compiler's padding).
    pub fn align(&mut self, a: usize) {
        let r = self.buf.len() % a;
        if r != 0 {
            self.zeros(a - r);
        }
    }
    pub fn len(&self) -> usize {
        self.buf.len()
    }
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
}

/// Reads a payload field by field; every read is bounds-checked.
#[derive(Debug)]
pub struct Get<'a> {
    b: &'a [u8],
    at: usize,
    what: &'static str,
}

impl<'a> Get<'a> {
    /// `what`: the structure's name, for errors.
    pub fn new(b: &'a [u8], what: &'static str) -> Get<'a> {
        Get { b, at: 0, what }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], ProtoError> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.b.len());
        let Some(end) = end else {
            return Err(ProtoError::Malformed {
                what: self.what,
                why: format!(
                    "{} bytes, at least {} needed",
                    self.b.len(),
                    self.at.saturating_add(n)
                ),
            });
        };
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    pub fn u8(&mut self) -> Result<u8, ProtoError> {
        Ok(self.take(1)?[0])
    }
    pub fn u16(&mut self) -> Result<u16, ProtoError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2")))
    }
    pub fn u32(&mut self) -> Result<u32, ProtoError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4")))
    }
    pub fn u64(&mut self) -> Result<u64, ProtoError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8")))
    }
    pub fn fp64(&mut self) -> Result<f64, ProtoError> {
        let v = f64::from_bits(self.u64()?);
        self.skip(8)?;
        Ok(v)
    }
    /// A fixed `char[n]`: the text before the first NUL (invalid UTF-8 replaced).
    pub fn text(&mut self, n: usize) -> Result<String, ProtoError> {
        Ok(cstr(self.take(n)?))
    }
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], ProtoError> {
        self.take(n)
    }
    pub fn skip(&mut self, n: usize) -> Result<(), ProtoError> {
        self.take(n).map(|_| ())
    }
    /// Skip to `off` bytes from the start (a structure's known field offset).
    pub fn seek(&mut self, off: usize) -> Result<(), ProtoError> {
        if off < self.at {
            return Err(ProtoError::Malformed {
                what: self.what,
                why: format!("offset {off} is behind the reader"),
            });
        }
        self.skip(off - self.at)
    }
    pub fn pos(&self) -> usize {
        self.at
    }
    pub fn rest(&self) -> &'a [u8] {
        &self.b[self.at..]
    }
}

/// The text of a C string buffer: up to the first NUL.
pub fn cstr(b: &[u8]) -> String {
    let end = b.iter().position(|c| *c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_and_short_input_is_an_error() {
        let mut p = Put::default();
        p.u16(0xbeef);
        p.u32(7);
        p.fp64(100.0);
        p.text("job1", 8);
        assert_eq!(p.len(), 2 + 4 + 16 + 8);
        // fio's pack754(100.0): the IEEE bits 0x4059000000000000 (seen in a fio capture).
        assert_eq!(&p.buf[6..14], &0x4059_0000_0000_0000u64.to_le_bytes());
        let mut g = Get::new(&p.buf, "test");
        assert_eq!(g.u16().unwrap(), 0xbeef);
        assert_eq!(g.u32().unwrap(), 7);
        assert_eq!(g.fp64().unwrap(), 100.0);
        assert_eq!(g.text(8).unwrap(), "job1");
        let e = g.u8().unwrap_err().to_string();
        assert!(e.contains("malformed test"), "{e}");
        // A text that fills its buffer keeps a NUL.
        let mut p = Put::default();
        p.text("abcdef", 4);
        assert_eq!(p.buf, b"abc\0");
    }
}
