//! A run as one of several processes (fiox under MPI) as the rest of the binary sees it: the
//! [`Peers`] of this process decide who prints (rank 0), keep the phases in step (a
//! [`fiox_runner::GroupSync`]) and combine every process's outcome into one. [`Alone`] is the
//! ordinary run of one process. [`launched`] tells whether an MPI launcher (mpirun, mpiexec,
//! srun) started this process; a fiox built without the `mpi` feature refuses such a start
//! with several processes instead of letting each run and report alone.

use anyhow::Result;
use fiox_job::{Invocation, JobSpec};
use fiox_runner::RunOutcome;
use fiox_stats::RunResult;
use serde_json::Value;

/// The processes of one run, from this process's side.
pub trait Peers {
    /// This process prints the header, the ETA and the reports (rank 0; always when alone).
    fn lead(&self) -> bool;
    /// Processes in the run.
    fn ranks(&self) -> u32;
    /// Keeps the phases of every process in step (None: alone).
    fn sync(&self) -> Option<&dyn fiox_runner::GroupSync>;
    /// Every process's outcome combined; every process receives the same.
    fn reduce(&self, inv: &Invocation, outcome: RunOutcome) -> Result<Reduced>;
    /// What this process puts into the names of the logs it writes for the whole run.
    fn log_tag(&self) -> Option<String> {
        None
    }
}

/// A run's outcome over all its processes.
pub struct Reduced {
    pub result: RunResult,
    /// Failures, each naming its rank and host when there are several processes.
    pub errors: Vec<String>,
    pub interrupted: bool,
    /// `fiox.mpi` in JSON (None: alone).
    pub section: Option<Value>,
    /// The block printed after the normal report (empty: alone).
    pub text: String,
}

/// The ordinary run: one process.
pub struct Alone;

impl Peers for Alone {
    fn lead(&self) -> bool {
        true
    }
    fn ranks(&self) -> u32 {
        1
    }
    fn sync(&self) -> Option<&dyn fiox_runner::GroupSync> {
        None
    }
    fn reduce(&self, _inv: &Invocation, outcome: RunOutcome) -> Result<Reduced> {
        Ok(Reduced {
            errors: outcome.errors.iter().map(ToString::to_string).collect(),
            result: outcome.result,
            interrupted: outcome.interrupted,
            section: None,
            text: String::new(),
        })
    }
}

/// fio's `Starting N threads` for a run of `ranks` processes: every rank's threads, as one
/// fio run with numjobs = ranks x jobs would say, and how they are spread.
pub fn starting_line(jobs: &[JobSpec], ranks: u32) -> String {
    let n = jobs.len() as u64 * u64::from(ranks);
    format!(
        "Starting {n} thread{} ({ranks} MPI ranks x {})",
        if n == 1 { "" } else { "s" },
        jobs.len()
    )
}

/// What an MPI launcher told this process in its environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    pub rank: u32,
    /// Processes started (None: the launcher did not say; MPI itself will).
    pub size: Option<u32>,
}

/// Whether mpirun/mpiexec (Open MPI, MPICH/Hydra, PMIx) or srun started this process, from
/// the variables each sets for its processes.
pub fn launched() -> Option<Launch> {
    launched_from(|k| std::env::var(k).ok())
}

fn launched_from(var: impl Fn(&str) -> Option<String>) -> Option<Launch> {
    let num = |k: &str| var(k).and_then(|v| v.trim().parse::<u32>().ok());
    for (rank, size) in [
        ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
        ("PMI_RANK", "PMI_SIZE"),
        ("PMIX_RANK", "SLURM_STEP_NUM_TASKS"),
    ] {
        if let Some(r) = num(rank) {
            return Some(Launch {
                rank: r,
                size: num(size),
            });
        }
    }
    None
}

/// The refusal of a fiox built without MPI that a launcher started as one of several
/// processes (None: a single process runs as usual).
#[cfg_attr(feature = "mpi", allow(dead_code))]
pub fn refuse_without_mpi(l: Launch) -> Option<String> {
    match l.size {
        Some(n) if n > 1 => Some(format!(
            "started by an MPI launcher as rank {} of {n}, but this fiox was built without MPI: \
             each process would run the jobs alone and print its own report. Build it with \
             `cargo build --release --features mpi` (needs an MPI library such as Open MPI), or \
             run fiox without mpirun/srun",
            l.rank
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn launchers_are_recognised_by_their_variables() {
        let ompi = [("OMPI_COMM_WORLD_RANK", "3"), ("OMPI_COMM_WORLD_SIZE", "4")];
        assert_eq!(
            launched_from(env(&ompi)),
            Some(Launch {
                rank: 3,
                size: Some(4)
            })
        );
        let hydra = [("PMI_RANK", "0"), ("PMI_SIZE", "2")];
        assert_eq!(launched_from(env(&hydra)).and_then(|l| l.size), Some(2));
        let srun = [("PMIX_RANK", "1"), ("SLURM_STEP_NUM_TASKS", "8")];
        assert_eq!(launched_from(env(&srun)).and_then(|l| l.size), Some(8));
        // sbatch's own shell has SLURM_* but no rank from a launcher: not an MPI start.
        assert_eq!(launched_from(env(&[("SLURM_NTASKS", "8")])), None);
    }

    #[test]
    fn a_build_without_mpi_refuses_several_ranks_only() {
        let one = Launch {
            rank: 0,
            size: Some(1),
        };
        assert_eq!(refuse_without_mpi(one), None);
        let four = Launch {
            rank: 2,
            size: Some(4),
        };
        let msg = refuse_without_mpi(four).unwrap();
        assert!(
            msg.contains("rank 2 of 4") && msg.contains("--features mpi"),
            "{msg}"
        );
    }
}
