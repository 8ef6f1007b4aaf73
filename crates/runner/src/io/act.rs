//! fio's act profile hooks for one job: every completed I/O's total latency is counted into the
//! current hour-long slice; when an hour has passed, the slice is judged against act's pass
//! criteria (a failing hour ends the job with an error, as fio's act_io_u_lat does) and the
//! next slice begins. The report adds all jobs' slices up and prints act's table.

use fiox_job::profile::{ActSpec, ACT_SLICE_SECS};
use fiox_stats::{ActSlice, ACT_CRITERIA};

/// One job's act slices.
#[derive(Debug, Clone)]
pub struct ActCounter {
    prep: bool,
    /// When the current slice began (ns on the job's clock; None until the first I/O).
    sample_ns: Option<u64>,
    slice_ns: u64,
    cur: usize,
    pub slices: Vec<ActSlice>,
}

impl ActCounter {
    pub fn new(spec: ActSpec) -> ActCounter {
        ActCounter::with_slice_len(spec, ACT_SLICE_SECS * 1_000_000_000)
    }

    /// With another slice length (tests).
    pub fn with_slice_len(spec: ActSpec, slice_ns: u64) -> ActCounter {
        ActCounter {
            prep: spec.prep,
            sample_ns: None,
            slice_ns,
            cur: 0,
            slices: vec![ActSlice::default(); spec.slices as usize],
        }
    }

    /// Count an I/O that started at `start_ns` and completed at `now` (ns). Err: the slice
    /// that just ended fails a criterion (fio's message).
    pub fn add(&mut self, start_ns: u64, now: u64) -> Result<(), String> {
        // fio counts nothing in the prep phase, yet prints the (empty) table.
        if self.prep {
            return Ok(());
        }
        let sample = *self.sample_ns.get_or_insert(start_ns);
        let Some(slice) = self.slices.get_mut(self.cur) else {
            // Jitter past the last slice does not count (as in fio).
            return Ok(());
        };
        slice.add(now.saturating_sub(start_ns) / 1000);
        if now.saturating_sub(sample) < self.slice_ns {
            return Ok(());
        }
        let verdict = judge(slice);
        self.sample_ns = Some(now);
        self.cur += 1;
        verdict
    }
}

/// fio's mid-run check of a finished slice: the first criterion exceeded, if any.
fn judge(slice: &ActSlice) -> Result<(), String> {
    for (i, c) in ACT_CRITERIA.iter().enumerate() {
        let perm = 1000.0 * slice.over[i] as f64 / slice.total_ios.max(1) as f64;
        if perm >= c.per_mille as f64 {
            return Err(format!(
                "act: {:.6}% exceeds pass criteria of {:.6}%",
                perm / 10.0,
                c.per_mille as f64 / 10.0
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn counts_latencies_into_slices_and_judges_each_hour() {
        let spec = ActSpec {
            slices: 2,
            prep: false,
        };
        let mut c = ActCounter::with_slice_len(spec, 1000 * MS);
        // Slice 1: 10 I/Os, one over 8 ms (10%: fails the 1% limit when the slice ends).
        for i in 0..9 {
            assert_eq!(c.add(i * MS, i * MS + 500_000), Ok(()));
        }
        let end = c.add(999 * MS, 1009 * MS);
        assert_eq!(
            end,
            Err("act: 10.000000% exceeds pass criteria of 1.000000%".into())
        );
        assert_eq!(c.slices[0].total_ios, 10);
        assert_eq!(c.slices[0].over, [0, 1, 0]);
        // Slice 2: an I/O over 64 ms counts only there.
        assert_eq!(c.add(1010 * MS, 1100 * MS), Ok(()));
        assert_eq!(c.slices[1].over, [0, 0, 1]);
        // Past the last slice: not counted.
        c.add(3000 * MS, 3000 * MS + 1).ok();
        c.add(3001 * MS, 3001 * MS + 1).ok();
        assert_eq!(c.slices.iter().map(|s| s.total_ios).sum::<u64>(), 12);
    }

    #[test]
    fn prep_counts_nothing() {
        let mut c = ActCounter::new(ActSpec {
            slices: 1,
            prep: true,
        });
        assert_eq!(c.add(0, 100 * MS), Ok(()));
        assert_eq!(c.slices, vec![ActSlice::default()]);
    }
}
