//! fio 3.33's verify state file (`verify_state_save` / `verify_state_load`; fio's
//! verify-state.h), the default format of fiox's state files so that fio loads what fiox saved
//! and fiox loads what fio saved. All integers little-endian:
//!
//! | offset | size    | field                                                            |
//! |--------|---------|------------------------------------------------------------------|
//! | 0      | 8       | version (3)                                                      |
//! | 8      | 8       | body size S                                                      |
//! | 16     | 8       | fio's crc32c (no final inversion) of the body                    |
//! | 24     | 8       | body: completions recorded C                                     |
//! | 32     | 4       | iodepth D                                                        |
//! | 36     | 4       | number of files F                                                |
//! | 40     | 8       | writes issued (fio's `numberio`)                                 |
//! | 48     | 8       | job index                                                        |
//! | 56     | 56      | fio's random generator state (fio never reads it back; fiox writes zeros) |
//! | 112    | 64      | job name, NUL-padded                                             |
//! | 176    | 16×D×F  | completions: (file number, offset of a completed write), the C most recent first, the rest zero |
//!
//! fio reads exactly S body bytes, so fiox appends its own write log (the `writelog` module)
//! after them: fio ignores it, fiox uses it when it belongs to the job (it names every write,
//! not only the last D).

use crate::le::{u32_at, u64_at};

/// fio's `VSTATE_HDR_VERSION`.
pub const FIO_STATE_VERSION: u64 = 3;
/// Size of `struct verify_state_hdr`.
pub const FIO_HDR_LEN: usize = 24;
/// Size of `struct thread_io_list` without its completions.
const LIST_FIXED: usize = 152;
/// Size of the name field.
const NAME_LEN: usize = 64;
/// Largest body accepted (fio's holds depth × files completions).
const MAX_BODY: u64 = 1 << 30;

/// The contents of fio's per-job state.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FioState {
    /// Writes the job issued (fio's `io_issues[DDIR_WRITE]`).
    pub numberio: u64,
    /// The job's iodepth: how many of the last writes may have been in flight.
    pub depth: u32,
    pub nofiles: u32,
    /// The job's index among all jobs (0-based; fio's `thread_number - 1`).
    pub index: u64,
    /// Job name (at most 63 bytes are stored).
    pub name: String,
    /// (file number, offset) of the most recent completed writes, newest first.
    pub comps: Vec<(u64, u64)>,
}

impl FioState {
    /// Header and body as fio writes them.
    pub fn encode(&self) -> Vec<u8> {
        let slots = self.depth as usize * self.nofiles as usize;
        let comps = &self.comps[..self.comps.len().min(slots)];
        let mut body = Vec::with_capacity(LIST_FIXED + 16 * slots);
        body.extend_from_slice(&(comps.len() as u64).to_le_bytes());
        body.extend_from_slice(&self.depth.to_le_bytes());
        body.extend_from_slice(&self.nofiles.to_le_bytes());
        body.extend_from_slice(&self.numberio.to_le_bytes());
        body.extend_from_slice(&self.index.to_le_bytes());
        body.extend_from_slice(&[0u8; 56]);
        let mut name = [0u8; NAME_LEN];
        let n = self.name.len().min(NAME_LEN - 1);
        name[..n].copy_from_slice(&self.name.as_bytes()[..n]);
        body.extend_from_slice(&name);
        for &(f, o) in comps {
            body.extend_from_slice(&f.to_le_bytes());
            body.extend_from_slice(&o.to_le_bytes());
        }
        body.resize(LIST_FIXED + 16 * slots, 0);
        let mut out = Vec::with_capacity(FIO_HDR_LEN + body.len());
        out.extend_from_slice(&FIO_STATE_VERSION.to_le_bytes());
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        let crc = crate::sum::fio_crc32c(&body);
        out.extend_from_slice(&u64::from(crc).to_le_bytes());
        out.extend_from_slice(&body);
        out
    }

    /// Parses fio's header and body from the start of `b`; returns the state and the bytes
    /// after the body (fiox's appended log, if any). Never panics.
    pub fn decode(b: &[u8]) -> Result<(FioState, &[u8]), String> {
        if b.len() < FIO_HDR_LEN {
            return Err(format!("too short ({} bytes)", b.len()));
        }
        let version = u64_at(b, 0);
        if version != FIO_STATE_VERSION {
            return Err(format!(
                "unsupported version {version} (fio 3.33's state files are version \
                 {FIO_STATE_VERSION})"
            ));
        }
        let size = u64_at(b, 8);
        if size > MAX_BODY || size < LIST_FIXED as u64 || size > (b.len() - FIO_HDR_LEN) as u64 {
            return Err(format!(
                "body size {size} impossible for a {}-byte file",
                b.len()
            ));
        }
        let end = FIO_HDR_LEN + size as usize;
        let body = &b[FIO_HDR_LEN..end];
        let (stored, computed) = (u64_at(b, 16), u64::from(crate::sum::fio_crc32c(body)));
        if stored != computed {
            return Err(format!(
                "corrupt: crc32c stored {stored:#x}, computed {computed:#x}"
            ));
        }
        let no_comps = u64_at(body, 0);
        let depth = u32_at(body, 8);
        let nofiles = u32_at(body, 12);
        let slots = (size as usize - LIST_FIXED) / 16;
        if no_comps > slots as u64 {
            return Err(format!(
                "{no_comps} completions announced but room for {slots}"
            ));
        }
        let name_raw = &body[88..88 + NAME_LEN];
        let name_len = name_raw.iter().position(|&c| c == 0).unwrap_or(NAME_LEN);
        let comps = (0..no_comps as usize)
            .map(|i| {
                let at = LIST_FIXED + 16 * i;
                (u64_at(body, at), u64_at(body, at + 8))
            })
            .collect();
        let st = FioState {
            numberio: u64_at(body, 16),
            depth,
            nofiles,
            index: u64_at(body, 24),
            name: String::from_utf8_lossy(&name_raw[..name_len]).into_owned(),
            comps,
        };
        Ok((st, &b[end..]))
    }

    /// Whether `b` starts with a valid fio state (header and body).
    pub fn is_fio_state(b: &[u8]) -> bool {
        FioState::decode(b).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> FioState {
        FioState {
            numberio: 300,
            depth: 4,
            nofiles: 2,
            index: 1,
            name: "writer".into(),
            comps: vec![(0, 8192), (1, 4096), (0, 4096)],
        }
    }

    #[test]
    fn layout_is_fios() {
        let b = sample().encode();
        assert_eq!(b.len(), 24 + 152 + 16 * 8);
        assert_eq!(u64_at(&b, 0), 3);
        assert_eq!(u64_at(&b, 8), 152 + 128);
        assert_eq!(u64_at(&b, 16), u64::from(!crc32c::crc32c(&b[24..])));
        assert_eq!(u64_at(&b, 24), 3);
        assert_eq!(u32_at(&b, 32), 4);
        assert_eq!(u32_at(&b, 36), 2);
        assert_eq!(u64_at(&b, 40), 300);
        assert_eq!(u64_at(&b, 48), 1);
        assert_eq!(&b[112..119], b"writer\0");
        assert_eq!((u64_at(&b, 176 + 16), u64_at(&b, 184 + 16)), (1, 4096));
    }

    #[test]
    fn round_trip_and_trailer() {
        let mut b = sample().encode();
        let n = b.len();
        b.extend_from_slice(b"tail");
        let (st, rest) = FioState::decode(&b).unwrap();
        assert_eq!(st, sample());
        assert_eq!(rest, b"tail");
        for i in 0..n {
            let mut bad = b.clone();
            bad[i] ^= 0x10;
            assert!(FioState::decode(&bad).is_err(), "byte {i}");
        }
        assert!(FioState::decode(&b[..100]).is_err());
    }
}
