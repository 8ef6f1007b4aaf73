//! fio's `flow`: jobs sharing a `flow_id` keep their I/O counts in proportion to their `flow`
//! weights (flow.c). Each flow has a shared counter (starting at 1) and the sum of its jobs'
//! weights; before each I/O a job compares its own count's share of the counter with its
//! weight's share of the total, and holds back (after `flow_sleep` µs, its in-flight I/O
//! done, when set) while it is ahead. A job that ends takes its count and weight out when the
//! coordinator reaps it (`Parts`), as fio's main thread does every 10 ms.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fiox_job::JobSpec;

/// One `flow_id`'s shared state.
#[derive(Debug)]
pub struct Flow {
    counter: AtomicU64,
    total_weight: AtomicU64,
}

/// The flow of each job (None: `flow=0`), every weight counted before any job starts, as
/// fio counts them when it reads the jobs.
pub fn table(jobs: &[JobSpec]) -> Vec<Option<Arc<Flow>>> {
    let mut flows: HashMap<i64, Arc<Flow>> = HashMap::new();
    jobs.iter()
        .map(|j| {
            (j.flow.weight > 0).then(|| {
                let f = flows.entry(j.flow.id).or_insert_with(|| {
                    Arc::new(Flow {
                        counter: AtomicU64::new(1),
                        total_weight: AtomicU64::new(0),
                    })
                });
                f.total_weight
                    .fetch_add(u64::from(j.flow.weight), Ordering::Relaxed);
                Arc::clone(f)
            })
        })
        .collect()
}

/// A running job's part in its flow.
#[derive(Debug)]
pub struct Member {
    flow: Arc<Flow>,
    weight: u64,
    count: u64,
    pub sleep_us: u64,
}

impl Member {
    pub fn new(flow: Arc<Flow>, job: &JobSpec) -> Member {
        Member {
            flow,
            weight: u64::from(job.flow.weight),
            count: 0,
            sleep_us: job.flow.sleep_us,
        }
    }

    /// fio's `flow_threshold_exceeded`: true when this job is ahead of its share (it must
    /// wait); otherwise the I/O is counted.
    pub fn ahead(&mut self) -> bool {
        let counter = self.flow.counter.load(Ordering::Relaxed).max(1);
        let total = self.flow.total_weight.load(Ordering::Relaxed).max(1);
        let mine = self.count as f64 / counter as f64;
        let share = self.weight as f64 / total as f64;
        if mine > share {
            return true;
        }
        self.flow.counter.fetch_add(1, Ordering::Relaxed);
        self.count += 1;
        false
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        self.flow.counter.fetch_sub(self.count, Ordering::Relaxed);
        self.flow
            .total_weight
            .fetch_sub(self.weight, Ordering::Relaxed);
    }
}

/// How often the coordinator releases the parts of finished jobs: fio's main thread reaps
/// its jobs every 10 ms (backend.c's run_threads loop).
pub const REAP_INTERVAL: Duration = Duration::from_millis(10);

/// The flow parts of one phase's jobs, by the job's place in the phase. A job lends its part
/// to its I/O loop and gets it back when the loop ends; the coordinator releases the part of
/// a job whose thread has finished (`release`), as fio's reap_threads calls flow_exit_job.
/// So a job whose partner's runtime ran out a moment earlier stays held until the partner
/// is reaped, as in fio, instead of running alone for the rest of its time slice (a job
/// held at every step ran 200 times its share in that slice under CPU contention).
#[derive(Debug)]
pub struct Parts {
    slots: Vec<Mutex<Option<Member>>>,
    /// Per job: in a flow and not yet released (its part may be lent to its loop).
    joined: Vec<AtomicBool>,
}

impl Parts {
    pub fn new(members: impl Iterator<Item = Option<Member>>) -> Parts {
        let slots: Vec<_> = members.map(Mutex::new).collect();
        let joined = slots
            .iter()
            .map(|m| AtomicBool::new(m.lock().is_ok_and(|m| m.is_some())))
            .collect();
        Parts { slots, joined }
    }

    /// The part of the job at `pos` in the phase.
    pub fn slot(&self, pos: usize) -> &Mutex<Option<Member>> {
        &self.slots[pos]
    }

    /// Some job of the phase is still in a flow (not yet released).
    pub fn any(&self) -> bool {
        self.joined.iter().any(|j| j.load(Ordering::Relaxed))
    }

    /// The job at `pos` was reaped: it leaves its flow (its count and weight are taken out).
    /// The caller reaps finished jobs only, whose loops have given their parts back.
    pub fn release(&self, pos: usize) {
        if self.joined[pos].swap(false, Ordering::Relaxed) {
            let part = self.slots[pos].lock().ok().and_then(|mut m| m.take());
            drop(part);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(weight: u32, id: i64) -> JobSpec {
        let mut j = JobSpec::default();
        j.flow.weight = weight;
        j.flow.id = id;
        j
    }

    #[test]
    fn counts_follow_the_weights() {
        let jobs = [job(1, 0), job(3, 0), job(0, 0)];
        let t = table(&jobs);
        assert!(t[2].is_none());
        let mut a = Member::new(t[0].clone().unwrap(), &jobs[0]);
        let mut b = Member::new(t[1].clone().unwrap(), &jobs[1]);
        let (mut na, mut nb) = (0, 0);
        for _ in 0..4000 {
            if !a.ahead() {
                na += 1;
            }
            if !b.ahead() {
                nb += 1;
            }
        }
        // 1:3, within a few I/Os.
        assert!((nb as i64 - 3 * na as i64).abs() < 8, "{na} {nb}");
        drop(a);
        // Alone in the flow, b is never held back.
        assert!((0..100).all(|_| !b.ahead()));
    }

    #[test]
    fn a_part_leaves_its_flow_when_released_not_before() {
        let jobs = [job(1, 0), job(3, 0)];
        let t = table(&jobs);
        let parts = Parts::new(
            t.iter()
                .zip(&jobs)
                .map(|(f, j)| f.clone().map(|f| Member::new(f, j))),
        );
        let mut b = parts.slot(1).lock().unwrap().take().unwrap();
        let mut a = parts.slot(0).lock().unwrap().take().unwrap();
        while !b.ahead() {}
        while !a.ahead() {}
        // b's loop ended and gave its part back, but b is not reaped yet: a stays held.
        *parts.slot(1).lock().unwrap() = Some(b);
        assert!(parts.any());
        assert!((0..100).all(|_| a.ahead()));
        parts.release(1);
        assert!(!a.ahead(), "a runs alone once b is reaped");
        *parts.slot(0).lock().unwrap() = Some(a);
        parts.release(0);
        assert!(!parts.any());
        assert_eq!(t[0].as_ref().unwrap().counter.load(Ordering::Relaxed), 1);
    }
}
