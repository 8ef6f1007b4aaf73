//! The priority of each I/O (fio's `fio_cmdprio_set_ioprio` plus `td->ioprio`): the job's own
//! priority, or — with `cmdprio_percentage`/`cmdprio_bssplit` — a per-direction draw from the
//! job's [`CmdPrio`] plan. The runner passes the value to the engine in the I/O unit and counts
//! the I/O's latency under the chosen priority's statistics.
//!
//! A job without cmdprio pays one predictable branch per I/O: no draw, no lookup.

use fiox_job::cmdprio::CmdPrio;
use fiox_job::JobSpec;
use fiox_stats::{LatStat, PrioStat};

/// Picks each I/O's priority.
#[derive(Debug, Clone)]
pub struct PrioPicker {
    default: u16,
    plan: Option<Box<CmdPrio>>,
    /// xorshift32 state of the percentage draws (fio draws from its own `prio_state`).
    rng: u32,
}

impl PrioPicker {
    pub fn new(job: &JobSpec, seed: u64) -> PrioPicker {
        // xorshift must not start at 0.
        let rng = (seed ^ (seed >> 32)) as u32 | 1;
        PrioPicker {
            default: job.default_ioprio(),
            plan: job.cmdprio.clone().map(Box::new),
            rng,
        }
    }

    /// The `(index, ioprio)` every I/O gets when no cmdprio plan picks one (what `pick`
    /// returns then without drawing); None with a plan.
    #[inline]
    pub fn fixed(&self) -> Option<(u8, u16)> {
        match self.plan {
            None => Some((0, self.default)),
            Some(_) => None,
        }
    }

    /// `(index, ioprio)` for an I/O of direction `ddir` (0 read, 1 write, ..) and `len` bytes:
    /// index 0 is the job's own priority.
    #[inline]
    pub fn pick(&mut self, ddir: u8, len: u32) -> (u8, u16) {
        let Some(plan) = self.plan.as_deref() else {
            return (0, self.default);
        };
        let Some(Some(dir)) = plan.dirs.get(ddir as usize) else {
            return (0, self.default);
        };
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 17;
        self.rng ^= self.rng << 5;
        let i = dir.pick(u64::from(len), self.rng % 100);
        (
            i,
            dir.prios.get(i as usize).copied().unwrap_or(self.default),
        )
    }
}

/// Empty per-priority statistics of each direction the plan covers (none without cmdprio).
pub fn prio_stats(job: &JobSpec) -> [Vec<PrioStat>; 3] {
    let mut out: [Vec<PrioStat>; 3] = Default::default();
    if let Some(plan) = &job.cmdprio {
        for (o, d) in out.iter_mut().zip(plan.dirs.iter()) {
            if let Some(d) = d {
                *o = d
                    .prios
                    .iter()
                    .map(|&p| PrioStat {
                        ioprio: u32::from(p),
                        stat: LatStat::default(),
                    })
                    .collect();
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(pct: u32) -> JobSpec {
        let mut j = JobSpec::default();
        j.engine.cmdprio.percentage = [pct, 0];
        j.cmdprio = fiox_job::cmdprio::plan(&j.engine.cmdprio, 0, [true, true], 1024).unwrap();
        j
    }

    #[test]
    fn percentage_splits_reads_and_leaves_writes() {
        let mut p = PrioPicker::new(&job(30), 7);
        let n = 100_000;
        let hi = (0..n).filter(|_| p.pick(0, 4096) == (1, 1 << 13)).count();
        assert!((28_000..32_000).contains(&hi), "{hi} of {n}");
        assert!((0..1000).all(|_| p.pick(1, 4096) == (0, 0)));
        assert_eq!(prio_stats(&job(30))[0].len(), 2);
        assert!(prio_stats(&job(30))[1].is_empty());
    }

    #[test]
    fn without_cmdprio_every_io_has_the_job_priority() {
        let mut j = JobSpec::default();
        j.cpu.prioclass = Some(3);
        let mut p = PrioPicker::new(&j, 1);
        assert_eq!(p.pick(0, 4096), (0, 3 << 13));
        assert!(prio_stats(&j).iter().all(Vec::is_empty));
    }
}
