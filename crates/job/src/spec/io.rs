//! What I/O a job issues: directions ([`Ddir`], per-direction values [`PerDir`]), the `rw=`
//! pattern, block sizes, `size=` and how submissions and syncs are made.

/// A data direction as fio counts them (`rwts` order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ddir {
    Read = 0,
    Write = 1,
    Trim = 2,
}

impl Ddir {
    pub const ALL: [Ddir; 3] = [Ddir::Read, Ddir::Write, Ddir::Trim];
    pub fn index(self) -> usize {
        self as usize
    }
}

/// One value per direction (fio's `read,write,trim` triplets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PerDir<T> {
    pub read: T,
    pub write: T,
    pub trim: T,
}

impl<T> PerDir<T> {
    pub fn get(&self, d: Ddir) -> &T {
        match d {
            Ddir::Read => &self.read,
            Ddir::Write => &self.write,
            Ddir::Trim => &self.trim,
        }
    }
    pub fn get_mut(&mut self, d: Ddir) -> &mut T {
        match d {
            Ddir::Read => &mut self.read,
            Ddir::Write => &mut self.write,
            Ddir::Trim => &mut self.trim,
        }
    }
}

impl<T: Clone> PerDir<T> {
    pub fn all(v: T) -> Self {
        PerDir {
            read: v.clone(),
            write: v.clone(),
            trim: v,
        }
    }
}

/// `rw=` pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RwMode {
    Read,
    Write,
    Trim,
    RandRead,
    RandWrite,
    RandTrim,
    /// `rw`/`readwrite`: sequential mixed.
    ReadWrite,
    RandRw,
    TrimWrite,
    /// Random trims, each followed by a write of the block just trimmed.
    RandTrimWrite,
}

impl RwMode {
    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwMode::RandRead
                | RwMode::RandWrite
                | RwMode::RandTrim
                | RwMode::RandRw
                | RwMode::RandTrimWrite
        )
    }
    pub fn has_read(self) -> bool {
        matches!(
            self,
            RwMode::Read | RwMode::RandRead | RwMode::ReadWrite | RwMode::RandRw
        )
    }
    pub fn has_write(self) -> bool {
        matches!(
            self,
            RwMode::Write
                | RwMode::RandWrite
                | RwMode::ReadWrite
                | RwMode::RandRw
                | RwMode::TrimWrite
                | RwMode::RandTrimWrite
        )
    }
    pub fn has_trim(self) -> bool {
        matches!(
            self,
            RwMode::Trim | RwMode::RandTrim | RwMode::TrimWrite | RwMode::RandTrimWrite
        )
    }
    /// fio's name as printed in the job header line (`rw=randrw`).
    pub fn fio_name(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::Trim => "trim",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::RandTrim => "randtrim",
            RwMode::ReadWrite => "rw",
            RwMode::RandRw => "randrw",
            RwMode::TrimWrite => "trimwrite",
            RwMode::RandTrimWrite => "randtrimwrite",
        }
    }
}

/// `rw=mode:N`. For sequential modes `n` is a byte skip after each I/O; for random modes it is
/// the number of I/Os issued per newly generated random offset (fio's `rw_seq`/`:N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RwSpec {
    pub mode: RwMode,
    pub n: u64,
}

/// Block sizes for one direction: `bs`, `bsrange` or `bssplit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BsSpec {
    pub min: u64,
    pub max: u64,
    /// `bssplit` entries `(block size, percent)`; blank shares already resolved so the percents sum
    /// to 100. Empty when not given.
    pub split: Vec<(u64, u32)>,
}

impl BsSpec {
    pub fn fixed(bs: u64) -> Self {
        BsSpec {
            min: bs,
            max: bs,
            split: Vec::new(),
        }
    }
}

/// A size that may be given in bytes or as a percentage of the file/device (`size=50%`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SizeSpec {
    Bytes(u64),
    /// Percent, 0.0..=100.0.
    Percent(f64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoSubmitMode {
    Inline,
    Offload,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncMode {
    None,
    /// `sync=1` / `sync=sync`: O_SYNC
    Sync,
    /// `sync=dsync`: O_DSYNC
    Dsync,
}
