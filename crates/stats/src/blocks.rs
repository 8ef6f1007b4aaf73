//! fio's block error histogram (`block_error_percentiles`): for every trim-sized block of a
//! job's one file, how many times it was trimmed and its state (never trimmed, trimmed, or a
//! trim or write of it failed), encoded as fio encodes it (trim count in the low 29 bits,
//! state above); at the end, percentiles of the trim counts of the blocks that were trimmed
//! and the number of blocks in each state.

/// fio's block states, in its order (`enum block_info_state`).
pub const UNINIT: u32 = 0;
pub const TRIMMED: u32 = 1;
pub const WRITTEN: u32 = 2;
pub const TRIM_FAILURE: u32 = 3;
pub const WRITE_FAILURE: u32 = 4;
/// fio's names of the states, in the same order (`block_state_names`).
pub const STATE_NAMES: [&str; 5] = [
    "unwritten",
    "trimmed",
    "written",
    "trim failure",
    "write failure",
];
/// fio keeps at most this many blocks (`MAX_NR_BLOCK_INFOS`).
pub const MAX_BLOCKS: u64 = 8192;
const STATE_SHIFT: u32 = 29;

fn state(info: u32) -> u32 {
    info >> STATE_SHIFT
}

fn trims(info: u32) -> u32 {
    info & ((1 << STATE_SHIFT) - 1)
}

fn encode(state: u32, trims: u32) -> u32 {
    trims | (state << STATE_SHIFT)
}

/// The blocks of one job's file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockInfos {
    infos: Vec<u32>,
    bs: u64,
    start: u64,
}

impl BlockInfos {
    /// The `io_size / bs` blocks from `start` of the job's file; fio's limits: at least one
    /// block, at most [`MAX_BLOCKS`].
    pub fn new(io_size: u64, bs: u64, start: u64) -> Result<BlockInfos, String> {
        let n = io_size / bs.max(1);
        if n == 0 || n > MAX_BLOCKS {
            return Err(format!(
                "block_error_percentiles: cannot calculate block histogram with {n} trim \
                 blocks, maximum {MAX_BLOCKS} (as fio; use a larger trim bs or a smaller size)"
            ));
        }
        Ok(BlockInfos {
            infos: vec![encode(UNINIT, 0); n as usize],
            bs: bs.max(1),
            start,
        })
    }

    /// The block of `offset`; fio counts an I/O spanning blocks on its first one.
    fn at(&mut self, offset: u64) -> Option<&mut u32> {
        let i = offset.checked_sub(self.start)? / self.bs;
        self.infos.get_mut(usize::try_from(i).ok()?)
    }

    /// A trim at `offset` completed (fio's `trim_block_info`); failed blocks stay failed.
    pub fn trimmed(&mut self, offset: u64) {
        if let Some(i) = self.at(offset) {
            if state(*i) < TRIM_FAILURE {
                *i = encode(TRIMMED, trims(*i) + 1);
            }
        }
    }

    /// A trim (`trim`) or write at `offset` failed (fio's `unlog_io_piece`).
    pub fn failed(&mut self, offset: u64, trim: bool) {
        if let Some(i) = self.at(offset) {
            if state(*i) < TRIM_FAILURE {
                let s = if trim { TRIM_FAILURE } else { WRITE_FAILURE };
                *i = encode(s, trims(*i));
            }
        }
    }

    /// The encoded blocks, for the result.
    pub fn into_infos(self) -> Vec<u32> {
        self.infos
    }
}

/// fio's order of blocks: by category (never trimmed; trimmed or written; failed), then by
/// trim count, then by state.
fn category(state: u32) -> u32 {
    match state {
        UNINIT => 0,
        TRIMMED | WRITTEN => 1,
        _ => 2,
    }
}

/// (percentile, trim count) pairs and the number of blocks in each state.
pub type BlockSummary = (Vec<(f64, u32)>, [u32; 5]);

/// The percentiles of `plist` (sorted) over the trim counts of the blocks that left the
/// unwritten state, each (percentile, trims), and the blocks per state; None when every block
/// is unwritten (fio then reports no percentiles and no states).
pub fn block_percentiles(infos: &[u32], plist: &[f64]) -> Option<BlockSummary> {
    let mut sorted = infos.to_vec();
    sorted.sort_by_key(|&i| (category(state(i)), trims(i), state(i)));
    let uninit = sorted.iter().take_while(|&&i| state(i) == UNINIT).count();
    let mut list: Vec<f64> = plist.iter().copied().filter(|p| *p != 0.0).collect();
    if uninit == sorted.len() || list.is_empty() {
        return None;
    }
    list.sort_by(f64::total_cmp);
    let rest = (sorted.len() - uninit) as f64;
    let last = sorted.len() - 1;
    let pcts = list
        .iter()
        .map(|&p| {
            let idx = ((p * rest / 100.0) as usize + uninit).min(last);
            (p, trims(sorted[idx]))
        })
        .collect();
    let mut states = [0u32; 5];
    for &i in &sorted {
        if let Some(n) = states.get_mut(state(i) as usize) {
            *n += 1;
        }
    }
    Some((pcts, states))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_and_failures_are_counted_per_block() {
        let mut b = BlockInfos::new(8 * 4096, 4096, 4096).unwrap();
        b.trimmed(4096);
        b.trimmed(4096);
        b.trimmed(2 * 4096 + 100);
        b.failed(3 * 4096, true);
        b.trimmed(3 * 4096);
        b.failed(4 * 4096, false);
        b.trimmed(0); // before the region: ignored
        let infos = b.into_infos();
        assert_eq!(trims(infos[0]), 2);
        assert_eq!(state(infos[2]), TRIM_FAILURE, "a failed block stays failed");
        let (p, states) = block_percentiles(&infos, &[50.0, 1.0, 99.0]).unwrap();
        assert_eq!(states, [4, 2, 0, 1, 1]);
        // The 4 blocks past the unwritten: trimmed 1, trimmed 2, failed 0, failed 0 (by
        // category, then trims).
        assert_eq!(p, vec![(1.0, 1), (50.0, 0), (99.0, 0)]);
    }

    #[test]
    fn limits_and_untouched_blocks() {
        assert!(BlockInfos::new(100, 4096, 0).is_err());
        assert!(BlockInfos::new((MAX_BLOCKS + 1) * 512, 512, 0).is_err());
        let b = BlockInfos::new(4 * 4096, 4096, 0).unwrap();
        assert_eq!(block_percentiles(&b.into_infos(), &[50.0]), None);
    }
}
