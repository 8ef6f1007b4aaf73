//! The runner: lays out files, starts one thread per job, groups them (stonewall, new_group,
//! wait_for), drives the engine with the workload generator under the job's timing and pacing,
//! measures latencies and fills [`fiox_stats::RunResult`].
