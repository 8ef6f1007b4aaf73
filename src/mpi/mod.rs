//! fiox under MPI (built with `--features mpi`, started by mpirun, mpiexec or srun): every
//! rank runs the job file's jobs on its own host, in step with the others, and rank 0 prints
//! one report of all of them, shaped like a single fio run with numjobs = ranks x jobs.
//!
//! Each rank's jobs are placed as numjobs clones would be ([`place`]: `$jobnum` and
//! offset_increment continue across ranks, `$rank`/`%r` name the rank); the runner's
//! [`fiox_runner::GroupSync`] is one `MPI_Allreduce` of a few flag bits, which starts every
//! phase together and passes a stop or a stonewall from any rank to all; at the end every
//! rank's results travel as JSON to every rank (`MPI_Allgatherv`) and are merged (`merge.rs`).
//! Failures are agreed, not left hanging: a rank that cannot parse its job file or run its
//! jobs says so through the same exchanges, and an error outside them (or a panic) aborts
//! the whole MPI job with that rank's host and message. Every MPI call is made on the main
//! thread (MPI_THREAD_FUNNELED).

mod merge;

use crate::cluster::{Launch, Peers, Reduced};
use anyhow::{bail, Result};
use fiox_job::{Action, Invocation, JobSpec};
use fiox_runner::{GroupSync, RunOutcome, SyncFlags};
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;
use std::sync::atomic::{AtomicBool, Ordering};

/// MPI is initialised and not yet finalised: an error or panic must abort every rank.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// After an error or panic left [`main`] early: abort every rank (the others may be waiting
/// in a collective call for this one).
pub fn abort_if_unfinished(code: i32) {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        SimpleCommunicator::world().abort(code);
    }
}

/// This process's place in the MPI job.
struct Cluster {
    world: SimpleCommunicator,
    rank: u32,
    size: u32,
    host: String,
    /// Files are shared between ranks: lay them out one rank at a time.
    shared_files: bool,
}

/// Run the command line as one rank of an MPI job; returns this rank's exit code (the same on
/// every rank once the run has started).
pub fn main(args: &[String], launch: Launch) -> Result<i32> {
    let Some((universe, _)) = mpi::initialize_with_threading(mpi::Threading::Funneled) else {
        bail!("MPI could not be initialised (was it initialised already?)");
    };
    ACTIVE.store(true, Ordering::SeqCst);
    // Finalised only after a run every rank went through: MPI_Finalize waits for the others,
    // so a failing rank aborts instead (see `abort_if_unfinished`).
    let universe = std::mem::ManuallyDrop::new(universe);
    let world = universe.world();
    let mut c = Cluster {
        rank: world.rank() as u32,
        size: world.size() as u32,
        host: mpi::environment::processor_name().unwrap_or_else(|_| "?".into()),
        world,
        shared_files: false,
    };
    let code = c.run(args, launch);
    match code {
        Ok(code) => {
            ACTIVE.store(false, Ordering::SeqCst);
            drop(std::mem::ManuallyDrop::into_inner(universe));
            Ok(code)
        }
        Err(e) => Err(e.context(format!("rank {} ({})", c.rank, c.host))),
    }
}

impl Cluster {
    fn lead_rank(&self) -> bool {
        self.rank == 0
    }

    fn run(&mut self, args: &[String], launch: Launch) -> Result<i32> {
        if let Some(n) = launch.size.filter(|&n| n != self.size) {
            bail!(
                "the launcher started {n} processes but MPI joined {} of them: with srun, add \
                 --mpi=pmix (or the plugin your MPI was built for, see `srun --mpi=list`)",
                self.size
            );
        }
        let parsed = fiox_job::parse_invocation(args).map_err(|e| format!("{e:#}"));
        let inv = match self.agree(parsed) {
            Ok(inv) => inv,
            Err(code) => return Ok(code),
        };
        if !matches!(inv.action, Action::Run) {
            // --version, --help, --parse-only...: rank 0 answers for all.
            return if self.lead_rank() {
                crate::act(&inv, &crate::cluster::Alone)
            } else {
                Ok(0)
            };
        }
        let mine = place(&inv, self.rank);
        // Decided alike on every rank: each makes the same number of exchanges.
        self.shared_files =
            self.size > 1 && shares_files(&place(&inv, 0).jobs, &place(&inv, 1).jobs);
        crate::act(&mine, self)
    }

    /// Every rank's `r`: the value when all succeeded, else (on every rank) exit code 1 after
    /// rank 0 printed each failure with its ranks and hosts.
    fn agree<T>(&self, r: Result<T, String>) -> Result<T, i32> {
        let mine = match &r {
            Ok(_) => String::new(),
            Err(e) => e.clone(),
        };
        let all = self.gather(&serde_json::to_vec(&(&self.host, &mine)).unwrap_or_default());
        let failed: Vec<(u32, String, String)> = all
            .iter()
            .enumerate()
            .filter_map(|(rank, b)| {
                let (host, msg): (String, String) = serde_json::from_slice(b).ok()?;
                (!msg.is_empty()).then_some((rank as u32, host, msg))
            })
            .collect();
        match r {
            Ok(v) if failed.is_empty() => Ok(v),
            _ => {
                if self.lead_rank() {
                    for line in merge::failure_lines(&failed) {
                        fiox_guard::eprintln!("fiox: {line}");
                    }
                }
                Err(1)
            }
        }
    }

    /// Every rank's bytes, in rank order, on every rank.
    fn gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        let n = mine.len() as Count;
        let mut counts = vec![0 as Count; self.size as usize];
        self.world.all_gather_into(&n, &mut counts[..]);
        let displs: Vec<Count> = counts
            .iter()
            .scan(0, |acc, &x| {
                let at = *acc;
                *acc += x;
                Some(at)
            })
            .collect();
        let total: usize = counts.iter().map(|&c| c as usize).sum();
        let mut buf = vec![0u8; total];
        {
            let mut part = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
            self.world.all_gather_varcount_into(mine, &mut part);
        }
        counts
            .iter()
            .zip(&displs)
            .map(|(&c, &d)| buf[d as usize..(d + c) as usize].to_vec())
            .collect()
    }
}

impl GroupSync for Cluster {
    fn exchange(&self, local: SyncFlags) -> SyncFlags {
        let mut all = 0u32;
        self.world
            .all_reduce_into(&local.to_bits(), &mut all, SystemOperation::bitwise_or());
        SyncFlags::from_bits(all)
    }

    fn turns(&self) -> Option<(u32, u32)> {
        self.shared_files.then_some((self.rank, self.size))
    }
}

impl Peers for Cluster {
    fn lead(&self) -> bool {
        self.lead_rank()
    }
    fn ranks(&self) -> u32 {
        self.size
    }
    fn sync(&self) -> Option<&dyn GroupSync> {
        Some(self)
    }
    fn log_tag(&self) -> Option<String> {
        Some(format!("rank{}", self.rank))
    }

    fn reduce(&self, inv: &Invocation, outcome: RunOutcome) -> Result<Reduced> {
        let mut mine = merge::RankReport::new(self.rank, &self.host, outcome);
        if inv.settings.bandwidth_log {
            // This rank's aggregate logs (in its working directory), for rank 0's sum.
            mine.agg_logs = fiox_runner::agg_log_names(self.log_tag().as_deref())
                .iter()
                .map(|n| std::fs::read_to_string(n).unwrap_or_default())
                .collect();
        }
        let bytes = serde_json::to_vec(&mine)?;
        let mut reports = Vec::with_capacity(self.size as usize);
        for (rank, b) in self.gather(&bytes).iter().enumerate() {
            let r: merge::RankReport = serde_json::from_slice(b)
                .map_err(|e| anyhow::anyhow!("the results of rank {rank} did not arrive: {e}"))?;
            reports.push(r);
        }
        if inv.settings.bandwidth_log && self.lead_rank() {
            write_agg_logs(&reports);
        }
        Ok(merge::combine(&inv.jobs, reports))
    }
}

/// `--bandwidth-log` over all ranks: fio's aggregate logs in rank 0's working directory, each
/// sample the sum of the ranks' samples of the same interval.
fn write_agg_logs(reports: &[merge::RankReport]) {
    for (d, name) in fiox_runner::agg_log_names(None).iter().enumerate() {
        let texts: Vec<&str> = reports
            .iter()
            .filter_map(|r| r.agg_logs.get(d).map(String::as_str))
            .collect();
        let written = fiox_runner::create_output(std::path::Path::new(name)).and_then(|mut f| {
            std::io::Write::write_all(&mut f, merge::sum_agg_logs(&texts).as_bytes())
        });
        if let Err(e) = written {
            fiox_guard::eprintln!("fiox: --bandwidth-log: {name}: {e}");
        }
    }
}

/// The jobs as rank `rank` runs them: numbered on from the ranks before it as numjobs clones
/// are (so `$jobnum`, offset_increment and the random seeds differ per rank), `$rank` (and
/// `%r` in filename=) replaced by the rank, and log files named with the rank.
fn place(inv: &Invocation, rank: u32) -> Invocation {
    let mut inv = inv.clone();
    for j in &mut inv.jobs {
        place_job(j, rank);
    }
    inv
}

fn place_job(j: &mut JobSpec, rank: u32) {
    let r = rank.to_string();
    j.clone_index += rank * j.numjobs.max(1);
    let f = &mut j.files;
    for name in &mut f.filenames {
        *name = name.replace("$rank", &r).replace("%r", &r);
    }
    for d in &mut f.directories {
        *d = d.replace("$rank", &r);
    }
    f.filename_format = f.filename_format.replace("$rank", &r);
    let l = &mut j.logs;
    for name in [
        &mut l.write_bw_log,
        &mut l.write_lat_log,
        &mut l.write_iops_log,
        &mut l.write_hist_log,
        &mut l.write_iolog,
    ]
    .into_iter()
    .flatten()
    {
        *name = if name.contains("$rank") {
            name.replace("$rank", &r)
        } else {
            format!("{name}.rank{r}")
        };
    }
}

/// Whether some job uses the same files on two ranks: its names, as ranks 0 and 1 place
/// them, are the same (no `$rank`, `%r`, or `$jobnum` of a derived name tells them apart).
fn shares_files(rank0: &[JobSpec], rank1: &[JobSpec]) -> bool {
    let names = |j: &JobSpec| {
        let f = &j.files;
        let own = if f.filenames.is_empty() {
            vec![f
                .filename_format
                .replace("$jobname", &j.name)
                .replace("$jobnum", &j.clone_index.to_string())]
        } else {
            f.filenames.clone()
        };
        (own, f.directories.clone())
    };
    rank0
        .iter()
        .zip(rank1)
        .any(|(a, b)| !a.ioengine.is(fiox_job::Engine::Null) && names(a) == names(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jobs(cmd: &[&str]) -> Invocation {
        let args: Vec<String> = cmd.iter().map(|s| s.to_string()).collect();
        fiox_job::parse_invocation(&args).unwrap()
    }

    #[test]
    fn ranks_number_on_like_clones_and_name_their_files() {
        let inv = jobs(&[
            "--name=a",
            "--filename=/tmp/f.%r:/tmp/g.$rank",
            "--size=1m",
            "--numjobs=2",
            "--write_bw_log=bw",
        ]);
        let r3 = place(&inv, 3);
        assert_eq!(r3.jobs[0].clone_index, 6);
        assert_eq!(r3.jobs[1].clone_index, 7);
        assert_eq!(r3.jobs[0].files.filenames, ["/tmp/f.3", "/tmp/g.3"]);
        assert_eq!(r3.jobs[0].logs.write_bw_log.as_deref(), Some("bw.rank3"));
        assert!(!shares_files(&place(&inv, 0).jobs, &place(&inv, 1).jobs));
    }

    #[test]
    fn one_named_file_is_shared_and_the_default_names_are_not() {
        let shared = jobs(&["--name=a", "--filename=/tmp/one", "--size=1m"]);
        assert!(shares_files(
            &place(&shared, 0).jobs,
            &place(&shared, 1).jobs
        ));
        let own = jobs(&["--name=a", "--directory=/tmp", "--size=1m"]);
        assert!(!shares_files(&place(&own, 0).jobs, &place(&own, 1).jobs));
    }
}
