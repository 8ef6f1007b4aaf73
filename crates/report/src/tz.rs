//! Local time for report dates. fio prints dates with C's `ctime`, i.e. in the local time zone;
//! fiox reads the same zone the C library would (`TZ` naming a zoneinfo file, else
//! `/etc/localtime`) from its TZif data, without FFI. Offsets come from the file's transition
//! table; past its last transition the last known offset applies (tzdata's full files list
//! transitions up to 2037). A `TZ` that names no readable file, and a missing
//! `/etc/localtime`, mean UTC — as with glibc.

use std::sync::OnceLock;

/// Transition times (unix seconds, ascending) and the UTC offset in force from each one, plus
/// the offset before the first transition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Zone {
    transitions: Vec<(i64, i32)>,
    initial: i32,
}

impl Zone {
    /// UTC (no offset ever).
    pub fn utc() -> Self {
        Zone {
            transitions: Vec::new(),
            initial: 0,
        }
    }

    /// Seconds east of UTC at `t`.
    pub fn offset_at(&self, t: i64) -> i32 {
        match self.transitions.partition_point(|(at, _)| *at <= t) {
            0 => self.initial,
            i => self.transitions[i - 1].1,
        }
    }

    /// Parse TZif data (RFC 8536), using the 64-bit section when present. None if malformed.
    pub fn parse(data: &[u8]) -> Option<Zone> {
        let v1 = Header::read(data)?;
        if data[4] >= b'2' {
            let rest = data.get(44 + v1.block_len(4)..)?;
            let v2 = Header::read(rest)?;
            return v2.zone(rest.get(44..)?, 8);
        }
        v1.zone(data.get(44..)?, 4)
    }
}

/// The counts of a TZif header.
struct Header {
    isut: usize,
    isstd: usize,
    leap: usize,
    time: usize,
    types: usize,
    chars: usize,
}

impl Header {
    fn read(d: &[u8]) -> Option<Header> {
        if d.get(..4)? != b"TZif" {
            return None;
        }
        let n = |i: usize| -> Option<usize> {
            let b = d.get(20 + 4 * i..24 + 4 * i)?;
            Some(u32::from_be_bytes(b.try_into().ok()?) as usize)
        };
        Some(Header {
            isut: n(0)?,
            isstd: n(1)?,
            leap: n(2)?,
            time: n(3)?,
            types: n(4)?,
            chars: n(5)?,
        })
    }

    /// Length of the data block that follows this header, with `tsize`-byte times.
    fn block_len(&self, tsize: usize) -> usize {
        self.time * tsize
            + self.time
            + self.types * 6
            + self.chars
            + self.leap * (tsize + 4)
            + self.isstd
            + self.isut
    }

    fn zone(&self, d: &[u8], tsize: usize) -> Option<Zone> {
        let idx_at = self.time * tsize;
        let types_at = idx_at + self.time;
        let utoff = |t: usize| -> Option<i32> {
            let b = d.get(types_at + 6 * t..types_at + 6 * t + 4)?;
            Some(i32::from_be_bytes(b.try_into().ok()?))
        };
        let mut transitions = Vec::with_capacity(self.time);
        for i in 0..self.time {
            let raw = d.get(i * tsize..(i + 1) * tsize)?;
            let at = if tsize == 8 {
                i64::from_be_bytes(raw.try_into().ok()?)
            } else {
                i64::from(i32::from_be_bytes(raw.try_into().ok()?))
            };
            let t = *d.get(idx_at + i)? as usize;
            transitions.push((at, utoff(t)?));
        }
        // Before the first transition: the first non-DST type (RFC 8536 3.2), else type 0.
        let initial = (0..self.types)
            .find(|t| d.get(types_at + 6 * t + 4) == Some(&0))
            .map_or_else(|| utoff(0), utoff)
            .unwrap_or(0);
        Some(Zone {
            transitions,
            initial,
        })
    }
}

/// The zone the C library would use for this process, read once.
pub fn local_zone() -> &'static Zone {
    static ZONE: OnceLock<Zone> = OnceLock::new();
    ZONE.get_or_init(|| {
        let path = match std::env::var("TZ") {
            Ok(tz) => {
                let tz = tz.strip_prefix(':').unwrap_or(&tz).to_string();
                if tz.starts_with('/') {
                    tz
                } else {
                    format!("/usr/share/zoneinfo/{tz}")
                }
            }
            Err(_) => "/etc/localtime".to_string(),
        };
        std::fs::read(path)
            .ok()
            .and_then(|d| Zone::parse(&d))
            .unwrap_or_else(Zone::utc)
    })
}

/// A hand-built TZif v1 file for tests: +1h before 2026-03-29 01:00 UTC, +2h (DST) after.
#[cfg(test)]
pub(crate) fn tests_sample() -> Vec<u8> {
    let mut d = b"TZif".to_vec();
    d.push(0); // version 1
    d.extend([0u8; 15]);
    for n in [0u32, 0, 0, 1, 2, 8] {
        d.extend(n.to_be_bytes());
    }
    d.extend(1_774_746_000i32.to_be_bytes());
    d.push(1);
    d.extend(3600i32.to_be_bytes());
    d.extend([0, 0]);
    d.extend(7200i32.to_be_bytes());
    d.extend([1, 4]);
    d.extend(b"CET\0CEST");
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        tests_sample()
    }

    #[test]
    fn offsets_follow_transitions() {
        let z = Zone::parse(&sample()).unwrap();
        assert_eq!(z.offset_at(0), 3600);
        assert_eq!(z.offset_at(1_774_745_999), 3600);
        assert_eq!(z.offset_at(1_774_746_000), 7200);
        assert_eq!(Zone::utc().offset_at(1_795_323_896), 0);
    }

    #[test]
    fn malformed_data_is_rejected() {
        assert!(Zone::parse(b"nope").is_none());
        let mut d = sample();
        d.truncate(50);
        assert!(Zone::parse(&d).is_none());
    }

    #[test]
    fn system_zoneinfo_if_installed() {
        // Berlin: CET in winter, CEST in summer. Skipped where tzdata is not installed.
        let Ok(d) = std::fs::read("/usr/share/zoneinfo/Europe/Berlin") else {
            return;
        };
        let z = Zone::parse(&d).expect("valid TZif");
        assert_eq!(z.offset_at(1_795_323_896), 3600); // Nov 2026
        assert_eq!(z.offset_at(1_782_000_000), 7200); // Jun 2026
    }
}
