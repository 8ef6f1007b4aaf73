//! Resolution: raw sections -> typed, fully derived [`JobSpec`]s. Applies `[global]`
//! inheritance (globals accumulate from the top of each job file, command-line globals first),
//! looks every option up in the table (unknown -> did-you-mean; fio options fiox cannot run
//! yet are checked and recorded in `JobSpec::unsupported`), applies values in order (`kb_base` first, since it changes how sizes read), checks
//! engine-owned options against the final engine, derives fio's dependent defaults, expands
//! `numjobs` and assigns reporting groups as fio does.

use crate::defs::{self, OptDef, Val};
use crate::error::{JobError, Location};
use crate::jobfile::{RawOpt, Section};
use crate::suggest;
use crate::JobSpec;
use std::collections::HashSet;

/// fio's limit on jobs (REAL_MAX_JOBS), counting numjobs clones.
pub const MAX_JOBS: usize = 4096;

/// Resolve sections (command line first, then job files in order) into jobs.
pub fn resolve(sections: &[Section]) -> Result<Vec<JobSpec>, JobError> {
    let cmdline_globals: Vec<RawOpt> = sections
        .iter()
        .filter(|s| s.global && s.file_index == 0)
        .flat_map(|s| s.opts.iter().cloned())
        .collect();
    let mut globals: Vec<RawOpt> = Vec::new();
    let mut current_file = 0;
    let mut first_job_of_file = true;
    let mut jobs: Vec<JobSpec> = Vec::new();
    let mut group = GroupCounter::default();
    for sec in sections {
        if sec.file_index != current_file {
            // fio reads the whole command line before any job file, so every file sees all
            // command-line globals, and a file's [global] sections do not leak into the next.
            current_file = sec.file_index;
            first_job_of_file = true;
            globals = cmdline_globals.clone();
        }
        if sec.global {
            // Names are checked when the options are applied to the jobs below (with their
            // own locations), after the job's engine, so an unsupported engine is named first.
            // As in fio, `name=` in [global] does not rename jobs (each is named by its
            // section); it still shows in the global options of the JSON report.
            globals.extend(
                sec.opts
                    .iter()
                    .filter(|o| !o.name.eq_ignore_ascii_case("name"))
                    .cloned(),
            );
            continue;
        }
        let mut opts = globals.clone();
        opts.extend(sec.opts.iter().cloned());
        let mut job = resolve_one(sec, &opts)?;
        // Each job file after the first starts with a barrier, as fio separates files.
        if first_job_of_file && sec.file_index > 1 {
            job.stonewall = true;
        }
        first_job_of_file = false;
        check_wait_for(&job, &jobs, &opts)?;
        let total = jobs.len() + job.numjobs as usize;
        if total > MAX_JOBS {
            let loc = opts
                .iter()
                .rev()
                .find(|o| o.name.eq_ignore_ascii_case("numjobs"))
                .map(|o| o.loc.clone())
                .unwrap_or_else(|| sec.loc.clone());
            return Err(JobError::new(
                loc,
                format!(
                    "job '{}' brings the number of jobs to {total}; at most {MAX_JOBS} are allowed (as in fio)",
                    job.name
                ),
            ));
        }
        expand(job, &mut jobs, &mut group);
    }
    check_groups(&jobs)?;
    share_dedupe_seeds(&mut jobs);
    Ok(jobs)
}

/// `dedupe_global`: each such job rebuilds the buffer streams of every job of the run, so it
/// gets their `randseed`s (fio reads them from the other jobs' thread data).
fn share_dedupe_seeds(jobs: &mut [JobSpec]) {
    if !jobs.iter().any(|j| j.buffers.dedupe_global) {
        return;
    }
    let seeds: Vec<u64> = jobs.iter().map(|j| j.rand.randseed).collect();
    for j in jobs.iter_mut().filter(|j| j.buffers.dedupe_global) {
        j.buffers.dedupe_peer_seeds.clone_from(&seeds);
    }
}

/// `log_compression_cpus` pins the log compression thread, which only `log_compression`
/// starts (and only for a job that writes a bw, iops, lat or histogram log).
fn check_log_compression_cpus(job: &mut JobSpec) {
    let l = &job.logs;
    let logs = l.write_bw_log.is_some()
        || l.write_iops_log.is_some()
        || l.write_lat_log.is_some()
        || l.write_hist_log.is_some();
    if l.log_compression_cpus.is_some() && (l.log_compression == 0 || !logs) {
        job.notes.push(
            "log_compression_cpus has no effect without log_compression and a bw, iops, lat or \
             histogram log (there is no log compression thread to pin), as in fio"
                .into(),
        );
    }
}

/// fio's verify-trim acts only where it logs writes for verification, and trims only with
/// `trim_backlog`; fio 3.33 aborts (an assertion) when the trims would come from a workload
/// that does not trim, so fiox refuses that job.
fn check_trim_verify(job: &mut JobSpec) -> Result<(), String> {
    let v = &job.verify;
    if v.trim_percentage == 0 {
        return Ok(());
    }
    let active = v.method != crate::VerifyMethod::None && v.do_verify && !v.experimental_verify;
    if !active {
        job.notes.push(
            "trim_percentage has no effect without verify= and do_verify=1 (and with \
             experimental_verify), as in fio"
                .into(),
        );
    } else if v.trim_backlog == 0 {
        job.notes.push(
            "trim_percentage without trim_backlog trims nothing (fio 3.33 picks the blocks but \
             never trims them); set trim_backlog=N"
                .into(),
        );
    } else if !job.rw.mode.has_trim() {
        return Err(format!(
            "trim_percentage with trim_backlog needs a workload that trims (rw=trimwrite or \
             randtrimwrite): fio 3.33 aborts on rw={} with these options",
            job.rw.mode.fio_name()
        ));
    }
    Ok(())
}

/// fio's checks of the dedupe working set (its `fixup_options`): it is sized from `size`, for
/// one file, and its unique pages must leave room for the duplicates asked for.
fn check_dedupe(job: &JobSpec, given: &HashSet<&str>) -> Result<(), String> {
    let b = &job.buffers;
    if b.dedupe_percentage == 0 || b.dedupe_mode != crate::DedupeMode::WorkingSet {
        return Ok(());
    }
    if !given.contains("size") {
        return Err(
            "dedupe_mode=working_set needs size= (the working set is a share of it), as in fio"
                .into(),
        );
    }
    if job.files.nrfiles != 1 {
        return Err(format!(
            "dedupe_mode=working_set works with one file per job, but nrfiles={} (as in fio)",
            job.files.nrfiles
        ));
    }
    if b.dedupe_working_set_percentage + b.dedupe_percentage > 100 {
        return Err(format!(
            "dedupe_percentage={} cannot be reached: dedupe_working_set_percentage={} of size \
             is unique pages; lower one so they add up to 100 at most (as fio requires)",
            b.dedupe_percentage, b.dedupe_working_set_percentage
        ));
    }
    Ok(())
}

/// fio requires a job with group_reporting to agree on lat_percentiles with the jobs (with
/// stats) of its reporting group, since their latencies are merged.
fn check_groups(jobs: &[JobSpec]) -> Result<(), JobError> {
    for j in jobs.iter().filter(|j| j.stats.group_reporting) {
        if let Some(first) = jobs
            .iter()
            .find(|o| o.group_id == j.group_id && o.stats.stats)
            .filter(|o| o.stats.lat_percentiles != j.stats.lat_percentiles)
        {
            return Err(JobError::bare(format!(
                "job '{}': lat_percentiles differs from job '{}' in the same reporting group {} (as fio, all jobs of a group must agree)",
                j.name, first.name, j.group_id
            )));
        }
    }
    Ok(())
}

#[derive(Default)]
struct GroupCounter {
    id: u32,
    jobs_in_group: u32,
}

/// numjobs clones and fio's group numbering (a barrier starts a group only if the current
/// group already has jobs).
fn expand(job: JobSpec, out: &mut Vec<JobSpec>, group: &mut GroupCounter) {
    for clone in 0..job.numjobs {
        let mut j = job.clone();
        j.clone_index = crate::spec::subjob_number(clone, job.numjobs);
        j.index = out.len() as u32;
        if clone > 0 {
            j.stonewall = false;
            j.new_group = false;
        }
        if (j.stonewall || j.new_group) && group.jobs_in_group > 0 {
            group.id += 1;
            group.jobs_in_group = 0;
        }
        j.group_id = group.id;
        group.jobs_in_group += 1;
        out.push(j);
    }
}

fn check_wait_for(job: &JobSpec, earlier: &[JobSpec], opts: &[RawOpt]) -> Result<(), JobError> {
    let Some(target) = &job.wait_for else {
        return Ok(());
    };
    let loc = opts
        .iter()
        .rev()
        .find(|o| o.name.eq_ignore_ascii_case("wait_for"))
        .map(|o| o.loc.clone())
        .unwrap_or(Location::Nowhere);
    let names: HashSet<&str> = earlier
        .iter()
        .filter(|j| &j.name == target)
        .map(|j| j.source.as_deref().unwrap_or(""))
        .collect();
    let count = earlier
        .iter()
        .filter(|j| &j.name == target && j.clone_index == 0)
        .count();
    match count {
        0 => Err(JobError::new(
            loc,
            format!("wait_for={target}: no earlier job is named '{target}'"),
        )),
        1 => Ok(()),
        n => Err(JobError::new(
            loc,
            format!(
                "wait_for={target} is ambiguous: {n} earlier jobs are named '{target}' (in {} file(s)); rename one",
                names.len().max(1)
            ),
        )),
    }
}

/// Look up an option name: implemented options first, then fio options fiox knows but cannot
/// run yet (see [`defs::fio_only`]); an unknown name becomes an error with a did-you-mean.
pub fn find_def(name: &str, loc: &Location) -> Result<&'static OptDef, JobError> {
    if let Some(d) = defs::lookup(name).or_else(|| defs::fio_only::lookup(name)) {
        return Ok(d);
    }
    let candidates =
        defs::all().flat_map(|d| std::iter::once(d.name).chain(d.aliases.iter().copied()));
    Err(JobError::new(
        loc.clone(),
        match suggest::closest(name, candidates) {
            Some(s) => format!("unknown option '{name}' (did you mean '{s}'?)"),
            None => format!("unknown option '{name}'"),
        },
    ))
}

fn needs_value(def: &OptDef, o: &RawOpt) -> JobError {
    JobError::new(
        o.loc.clone(),
        format!("option '{}' needs a value ({}=...)", o.name, def.name),
    )
}

/// Apply one section's effective options to a default job and derive the rest.
pub fn resolve_one(sec: &Section, opts: &[RawOpt]) -> Result<JobSpec, JobError> {
    let mut job = JobSpec {
        name: sec.name.clone(),
        source: sec.source.clone(),
        ..JobSpec::default()
    };
    let engine = final_engine(opts)?;
    let inherited = opts.len().saturating_sub(sec.opts.len());
    let mut looked: Vec<(&'static OptDef, &RawOpt)> = Vec::with_capacity(opts.len());
    for (i, o) in opts.iter().enumerate() {
        // Engines may share an option name (rdma's and net's `proto`, `hostname`, `port`):
        // the definition of the job's engine wins, fiox's own before a fio-only one.
        let def = match (
            defs::fio_only::lookup_for(&o.name, engine),
            defs::lookup(&o.name),
        ) {
            (Some(d), _) if d.engines.contains(&engine) => d,
            (Some(d), None) => d,
            _ => find_def(&o.name, &o.loc)?,
        };
        if o.value.is_none() && !def.kind.allows_bare() {
            return Err(needs_value(def, o));
        }
        let foreign = (i < inherited)
            .then(|| foreign_global_engine(def, engine, &opts[..inherited]))
            .flatten();
        if let Some(other) = foreign {
            // As in fio, a job that switches engine does not get [global]'s options of the
            // other engine; say so rather than drop them silently.
            job.notes.push(format!(
                "`{}` (set in [global] for ioengine {other}) does not apply to this job's ioengine {engine}; ignored, as in fio",
                o.name,
            ));
            continue;
        }
        looked.push((def, o));
    }
    // kb_base changes how every size is read, wherever it is written.
    for (def, o) in looked.iter().filter(|(d, _)| d.name == "kb_base") {
        apply(&mut job, def, o)?;
    }
    for (def, o) in &looked {
        apply(&mut job, def, o)?;
        if defs::fio_only::contains(def) {
            defs::record(
                &mut job,
                crate::Unsupported {
                    option: def.name.to_string(),
                    value: o.value.clone().unwrap_or_default(),
                    what: "option",
                    note: fio_only_note(def, &o.name),
                },
            );
        }
    }
    check_engine_options(&job, &looked)?;
    let given: HashSet<&str> = looked.iter().map(|(d, _)| d.name).collect();
    derive(&mut job, &given);
    resolve_cmdprio(&mut job, &looked)?;
    check_dedupe(&job, &given).map_err(|m| JobError::new(sec.loc.clone(), m))?;
    check_trim_verify(&mut job).map_err(|m| JobError::new(sec.loc.clone(), m))?;
    check_log_compression_cpus(&mut job);
    if job.stats.block_error_percentiles && job.files.nrfiles != 1 {
        return Err(JobError::new(
            sec.loc.clone(),
            format!(
                "block_error_percentiles works with one file per job, but nrfiles={} (as in fio)",
                job.files.nrfiles
            ),
        ));
    }
    offload_note(&mut job);
    // Dropped [global] options of another engine are not this job's (nor in fio's report).
    job.raw_options = opts
        .iter()
        .filter(|o| !o.name.eq_ignore_ascii_case("name"))
        .filter(|o| looked.iter().any(|(_, l)| std::ptr::eq(*l, *o)))
        .map(|o| (o.name.clone(), o.value.clone().unwrap_or_default()))
        .collect();
    // On the command line `--name=` is itself an option of the job, and fio lists it first.
    let cli_name = sec
        .source
        .is_none()
        .then(|| ("name".to_string(), sec.name.clone()));
    job.own_options = cli_name
        .into_iter()
        .chain(
            opts[inherited..]
                .iter()
                .filter(|o| !o.name.eq_ignore_ascii_case("name"))
                .map(|o| {
                    (
                        defs::canonical(&o.name),
                        o.value.clone().unwrap_or_default(),
                    )
                }),
        )
        .collect();
    Ok(job)
}

/// The hint for a fio-only option, naming the alias it was written as.
fn fio_only_note(def: &OptDef, written: &str) -> String {
    let hint = defs::fio_only::note(def);
    if written.eq_ignore_ascii_case(def.name) {
        hint.to_string()
    } else if hint.is_empty() {
        format!("written as `{written}`")
    } else {
        format!("written as `{written}`; {hint}")
    }
}

/// The job's engine (its last `ioengine=`; fio's default psync). An unknown engine explains
/// everything after it (its own options), so it is reported before any option.
fn final_engine(opts: &[RawOpt]) -> Result<&'static str, JobError> {
    let Some(o) = opts
        .iter()
        .rev()
        .find(|o| o.name.eq_ignore_ascii_case("ioengine"))
    else {
        return Ok("psync");
    };
    let v = o.value.as_deref().unwrap_or("");
    if let Some(e) = defs::fio_only_engine(v) {
        return Ok(e);
    }
    defs::canonical_engine(v)
        .map_err(|m| JobError::new(o.loc.clone(), format!("ioengine={v}: {m}")))
}

/// If `def` is an option of another engine than the job's, inherited from [global] where an
/// `ioengine=` owns it (valid where written, so fio accepts and drops it), that engine.
fn foreign_global_engine(def: &OptDef, engine: &str, globals: &[RawOpt]) -> Option<&'static str> {
    if def.engines.is_empty() || def.engines.contains(&engine) {
        return None;
    }
    globals
        .iter()
        .filter(|g| g.name.eq_ignore_ascii_case("ioengine"))
        .filter_map(|g| final_engine(std::slice::from_ref(g)).ok())
        .find(|e| def.engines.contains(e))
}

/// A size written as a count of zones (`524z`), fio 3.42's syntax for zoned devices.
fn zone_count(def: &OptDef, raw: &str) -> bool {
    use crate::defs::Kind;
    let t = raw.trim();
    matches!(def.kind, Kind::Size | Kind::SizeOrPercent)
        && t.len() > 1
        && t[..t.len() - 1].bytes().all(|b| b.is_ascii_digit())
        && t.ends_with(['z', 'Z'])
}

fn apply(job: &mut JobSpec, def: &OptDef, o: &RawOpt) -> Result<(), JobError> {
    let raw = o.value.as_deref().unwrap_or("");
    if let (Some(""), Some(w)) = (o.value.as_deref(), o.written.as_deref()) {
        if !w.is_empty() {
            return Err(JobError::new(
                o.loc.clone(),
                format!(
                    "{}={w}: the value is empty after substitution (is the variable set in the environment?)",
                    o.name
                ),
            ));
        }
    }
    if zone_count(def, raw) {
        // fio 3.42 reads `Nz` as N zones of a zoned block device (zonemode=zbd).
        defs::record_value(
            job,
            def.name,
            raw,
            "the `z` suffix (fio 3.42) counts zones of a zoned block device (zonemode=zbd), \
             which fiox does not support yet",
        );
        return Ok(());
    }
    let v = Val {
        raw,
        kb_base: job.kb_base,
        def,
    };
    // A size fiox refuses but fio reads (it ignores what follows the number): as fio, noted.
    let kb_base = job.kb_base;
    let applied =
        (def.apply)(job, &v).or_else(|m| match defs::size_as_fio_reads(def, raw, kb_base) {
            Some((fixed, note)) => (def.apply)(job, &Val { raw: &fixed, ..v }).map(|()| {
                job.notes.push(note);
            }),
            None => Err(m),
        });
    applied.map_err(|m| {
        let shown = match &o.value {
            Some(val) => format!("{}={val}", o.name),
            None => o.name.clone(),
        };
        JobError::new(o.loc.clone(), format!("{shown}: {m}"))
    })
}

fn check_engine_options(
    job: &JobSpec,
    looked: &[(&'static OptDef, &RawOpt)],
) -> Result<(), JobError> {
    for (def, o) in looked {
        if !def.engines.is_empty() && !def.engines.contains(&job.ioengine.as_str()) {
            return Err(JobError::new(
                o.loc.clone(),
                format!(
                    "option '{}' belongs to ioengine {}; this job uses ioengine {}",
                    o.name,
                    def.engines.join("/"),
                    job.ioengine
                ),
            ));
        }
    }
    Ok(())
}

/// The cmdprio plan from the engine's cmdprio options (fio checks them when the engine starts;
/// here before anything runs). An error names the last cmdprio option written.
fn resolve_cmdprio(
    job: &mut JobSpec,
    looked: &[(&'static OptDef, &RawOpt)],
) -> Result<(), JobError> {
    let active = [job.rw.mode.has_read(), job.rw.mode.has_write()];
    let plan = crate::cmdprio::plan(
        &job.engine.cmdprio,
        job.default_ioprio(),
        active,
        job.kb_base,
    );
    match plan {
        Ok(p) => {
            job.cmdprio = p;
            Ok(())
        }
        Err(m) => {
            // Only a cmdprio_percentage or cmdprio_bssplit value can make the plan fail.
            let at = looked
                .iter()
                .rev()
                .find(|(d, _)| d.name.starts_with("cmdprio_"));
            Err(match at {
                Some((_, o)) => JobError::new(
                    o.loc.clone(),
                    format!("{}={}: {m}", o.name, o.value.as_deref().unwrap_or("")),
                ),
                None => JobError::new(Location::Nowhere, m),
            })
        }
    }
}

/// fio caps iodepth at 1 for synchronous engines, offloaded or not, so its offload runs one
/// submit thread for them; fiox runs `iodepth` of them. Say so where the two differ.
fn offload_note(job: &mut JobSpec) {
    // fio's FIO_SYNCIO engines (its null engine is not one: fio queues it at any depth).
    const SYNC: [&str; 6] = ["sync", "psync", "vsync", "pvsync", "pvsync2", "mmap"];
    let engine = job.ioengine.to_ascii_lowercase();
    if job.io_submit_mode == crate::IoSubmitMode::Offload
        && job.iodepth > 1
        && SYNC.contains(&engine.as_str())
    {
        job.notes.push(format!(
            "io_submit_mode=offload with ioengine={engine}: fiox runs iodepth={} submit threads \
             in parallel; fio 3.33 caps a synchronous engine at depth 1 (set iodepth=1 for \
             fio's behaviour)",
            job.iodepth
        ));
    }
}

/// fiox runs `fill_device` as fio 3.33 for workloads that only write (overwrite=1 lays the
/// file out first), only read (their file laid out until the file system is full, then
/// read), or mix sequential reads and writes (laid out, then written past the end until
/// ENOSPC); a verifying one verifies nothing after the fill (fio terminates the job). Random
/// mixed workloads are refused: fio 3.33 cannot allocate a random map for an unlimited size,
/// and with `norandommap` its first read past the end fails with EIO. Trims and a read-only
/// job that verifies (fio fails at the first block, fiox checks them all) are not compared
/// with fio yet.
fn fill_device_scope(job: &mut JobSpec) {
    let m = job.rw.mode;
    let writes_only = m.has_write() && !m.has_read() && !m.has_trim();
    let read_only = m.has_read() && !m.has_write() && !m.has_trim();
    let seq_mixed = m == crate::RwMode::ReadWrite;
    let verifies = job.verify.method != crate::VerifyMethod::None && job.verify.do_verify;
    if !(writes_only || read_only || seq_mixed) || (read_only && verifies) {
        crate::defs::record_value(
            job,
            "fill_device",
            "1",
            "with a workload that mixes random reads and writes, trims, or only reads and \
             verifies",
        );
    }
}

/// fio's fixup_options for the verify header interval of a job that writes headers: with
/// varying write sizes (bsrange, bssplit) and no verify_interval, one header per smallest
/// write; an interval above the smallest write (or, in a reading job, the smallest read) is cut
/// to it; one that does not divide both the smallest and the largest write becomes their gcd.
/// So fiox writes and checks headers where fio does (fio verifies fiox's data and the other
/// way round). A fixed write size with no interval keeps `None`: one header per block, which
/// is what fio's gcd gives. verify_interval=0 stays for the verifier to refuse.
fn verify_interval_fixup(job: &mut JobSpec) {
    use crate::spec::VerifyMethod as M;
    if matches!(job.verify.method, M::None | M::Pattern | M::Null)
        || job.verify.verify_interval == Some(0)
    {
        return;
    }
    let (wmin, wmax, rmin) = (job.bs.write.min, job.bs.write.max, job.bs.read.min);
    if wmin == 0 {
        return;
    }
    let given = job.verify.verify_interval;
    let mut vi = given.unwrap_or(0);
    if wmax != wmin && vi == 0 {
        vi = wmin;
    }
    if vi > wmin {
        vi = wmin;
    } else if job.rw.mode.has_read() && vi > rmin {
        vi = rmin;
    }
    if vi == 0 || wmin % vi != 0 || wmax % vi != 0 {
        vi = gcd(wmin, wmax);
    }
    if given.is_some() || wmin != wmax || vi != wmin {
        job.verify.verify_interval = Some(vi);
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// fio's dependent defaults (init.c fixups) that downstream code relies on.
fn derive(job: &mut JobSpec, given: &HashSet<&str>) {
    if job.replay.read_iolog.is_some() && job.logs.write_iolog.take().is_some() {
        // fio warns about it (a parser warning `--warnings-fatal` stops on).
        let warning = "read_iolog overrides write_iolog (no I/O log is written), as in fio";
        job.notes.push(warning.into());
        job.fio_warnings.push(warning.into());
    }
    let r = &job.replay;
    if r.merge_file.is_none() && !(r.merge_scalars.is_empty() && r.merge_iters.is_empty()) {
        job.notes.push(
            "merge_blktrace_scalars and merge_blktrace_iters do nothing without merge_blktrace_file, as in fio"
                .into(),
        );
    }
    if !given.contains("iodepth_low") || job.iodepth_low == 0 || job.iodepth_low > job.iodepth {
        job.iodepth_low = job.iodepth;
    }
    if job.iodepth_batch_submit == 0 || job.iodepth_batch_submit > job.iodepth {
        job.iodepth_batch_submit = job.iodepth;
    }
    if job.iodepth_batch_complete_max < job.iodepth_batch_complete_min {
        job.iodepth_batch_complete_max = job.iodepth_batch_complete_min;
    }
    // fio's fixup_options: O_ATOMIC implies O_DIRECT, whichever of the two came last.
    if job.atomic {
        job.direct = true;
    }
    if job.files.fill_device {
        fill_device_scope(job);
    }
    verify_interval_fixup(job);
    // fio: loops=0 means once; a disabled latency has no percentiles.
    if job.timing.loops == 0 {
        job.timing.loops = 1;
    }
    if job.stats.disable_lat {
        job.stats.lat_percentiles = false;
    }
    if job.stats.disable_clat {
        job.stats.clat_percentiles = false;
    }
    if job.stats.disable_slat {
        job.stats.slat_percentiles = false;
    }
    if job.pacing.thinktime_spin > job.pacing.thinktime {
        job.pacing.thinktime_spin = job.pacing.thinktime;
    }
    let engine = job.ioengine.trim().to_ascii_lowercase();
    if engine == "cpuio" || engine == "exec" {
        // fio's cpuio and exec move no data, so no byte count ever ends them: they run until
        // their runtime is over (or forever), on one file (fio sets nr_files = open_files = 1).
        job.timing.time_based = true;
        job.files.nrfiles = 1;
        job.files.openfiles = 1;
        job.size.get_or_insert(crate::SizeSpec::Bytes(1 << 20));
    }
    if engine == "net" || engine == "netsplice" {
        // As fio: hostname= is the job's file name (a unix socket's path), one "file".
        if let Some(h) = job.engine.hostname.clone() {
            job.files.filenames = vec![h];
        }
        job.files.nrfiles = 1;
        // fio's net engine is bit based: rates are shown in bits unless unit_base says.
        if engine == "net" && job.unit_base == 0 {
            job.unit_base = 8;
        }
    }
    let name = job.name.clone();
    for p in [
        &mut job.logs.write_bw_log,
        &mut job.logs.write_lat_log,
        &mut job.logs.write_iops_log,
        &mut job.logs.write_hist_log,
    ]
    .into_iter()
    .flatten()
    {
        if p.is_empty() {
            p.clone_from(&name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sec(name: &str, file: usize, opts: &[(&str, Option<&str>)]) -> Section {
        Section {
            name: name.into(),
            global: name == "global",
            opts: opts
                .iter()
                .enumerate()
                .map(|(i, (n, v))| RawOpt {
                    name: n.to_string(),
                    value: v.map(str::to_string),
                    written: v.map(str::to_string),
                    loc: Location::File {
                        path: format!("f{file}"),
                        line: i + 1,
                    },
                })
                .collect(),
            loc: Location::Nowhere,
            source: Some(format!("f{file}")),
            file_index: file,
        }
    }

    #[test]
    fn groups_follow_fio() {
        let s = vec![
            sec("a", 1, &[("numjobs", Some("2"))]),
            sec("b", 1, &[("stonewall", None)]),
            sec("c", 1, &[("new_group", None), ("numjobs", Some("2"))]),
            sec("d", 2, &[]),
        ];
        let jobs = resolve(&s).unwrap();
        let groups: Vec<u32> = jobs.iter().map(|j| j.group_id).collect();
        assert_eq!(groups, [0, 0, 1, 2, 2, 3]);
        let clones: Vec<u32> = jobs.iter().map(|j| j.clone_index).collect();
        assert_eq!(clones, [0, 1, 0, 0, 1, 0]);
        let three = resolve(&[sec("t", 1, &[("numjobs", Some("4"))])]).unwrap();
        let clones: Vec<u32> = three.iter().map(|j| j.clone_index).collect();
        assert_eq!(clones, [0, 3, 2, 1], "fio counts clones down after the job");
        assert!(jobs[5].stonewall, "second file starts with a barrier");
    }

    /// fio's fixup_options for verify_interval, case by case.
    #[test]
    fn verify_interval_follows_fio() {
        let vi = |opts: &[(&str, Option<&str>)]| {
            let mut o = vec![("verify", Some("crc32c")), ("rw", Some("randwrite"))];
            o.extend_from_slice(opts);
            resolve(&[sec("a", 1, &o)]).unwrap()[0]
                .verify
                .verify_interval
        };
        assert_eq!(vi(&[("bs", Some("8k"))]), None, "one header per block");
        assert_eq!(vi(&[("bsrange", Some("4k-64k"))]), Some(4096));
        assert_eq!(vi(&[("bssplit", Some("8k/50:24k/50"))]), Some(8192));
        let given = ("verify_interval", Some("16k"));
        assert_eq!(
            vi(&[("bs", Some("8k")), given]),
            Some(8192),
            "cut to the write"
        );
        assert_eq!(
            vi(&[("bs", Some("24k")), given]),
            Some(24576),
            "no factor: the gcd"
        );
        assert_eq!(vi(&[("bs", Some("48k")), given]), Some(16384));
        let read = vec![
            ("verify", Some("crc32c")),
            ("rw", Some("randrw")),
            ("bs", Some("4k,16k")),
        ];
        let mut r = read.clone();
        r.push(("verify_interval", Some("8k")));
        assert_eq!(
            resolve(&[sec("a", 1, &r)]).unwrap()[0]
                .verify
                .verify_interval,
            Some(4096)
        );
        assert_eq!(
            resolve(&[sec("a", 1, &read)]).unwrap()[0]
                .verify
                .verify_interval,
            None
        );
        let pattern = [("verify", Some("pattern")), ("bsrange", Some("4k-64k"))];
        assert_eq!(
            resolve(&[sec("a", 1, &pattern)]).unwrap()[0]
                .verify
                .verify_interval,
            None
        );
    }

    /// merge_blktrace_scalars/iters without a merge file do nothing: said, not ignored.
    #[test]
    fn merge_lists_without_a_merge_file_are_noted() {
        let job = |opts: &[(&str, Option<&str>)]| resolve(&[sec("a", 1, opts)]).unwrap().remove(0);
        let iters = ("merge_blktrace_iters", Some("2"));
        let j = job(&[iters]);
        assert!(
            j.notes[0].contains("without merge_blktrace_file"),
            "{:?}",
            j.notes
        );
        assert!(job(&[iters, ("merge_blktrace_file", Some("m"))])
            .notes
            .is_empty());
    }

    #[test]
    fn offloaded_sync_engines_are_noted_where_fio_differs() {
        let job = |opts: &[(&str, Option<&str>)]| resolve(&[sec("a", 1, opts)]).unwrap().remove(0);
        let off = ("io_submit_mode", Some("offload"));
        let j = job(&[("ioengine", Some("psync")), ("iodepth", Some("8")), off]);
        assert!(
            j.notes[0].contains("fiox runs iodepth=8 submit threads"),
            "{:?}",
            j.notes
        );
        // Depth 1, an async engine, or inline submission: fio and fiox agree, no note.
        assert!(job(&[("ioengine", Some("psync")), off]).notes.is_empty());
        let aio = job(&[("ioengine", Some("libaio")), ("iodepth", Some("8")), off]);
        assert!(aio.notes.is_empty());
        assert!(job(&[("ioengine", Some("psync")), ("iodepth", Some("8"))])
            .notes
            .is_empty());
    }

    #[test]
    fn duplicate_job_names_are_separate_jobs() {
        // fio keeps both; only wait_for on such a name is ambiguous (see bad_inputs).
        let jobs = resolve(&[sec("a", 1, &[("bs", Some("8k"))]), sec("a", 1, &[])]).unwrap();
        assert_eq!(jobs.len(), 2);
        assert_eq!((jobs[0].bs.read.min, jobs[1].bs.read.min), (8192, 4096));
        assert_eq!((jobs[0].index, jobs[1].index), (0, 1));
    }

    #[test]
    fn global_name_does_not_rename_jobs() {
        let s = vec![
            sec("global", 1, &[("name", Some("g"))]),
            sec("jobsec", 1, &[]),
        ];
        assert_eq!(resolve(&s).unwrap()[0].name, "jobsec");
    }

    #[test]
    fn lat_percentiles_must_agree_within_a_group() {
        let s = vec![
            sec("a", 1, &[]),
            sec(
                "b",
                1,
                &[("lat_percentiles", Some("1")), ("group_reporting", None)],
            ),
        ];
        let no_merge = vec![
            sec("a", 1, &[]),
            sec("b", 1, &[("lat_percentiles", Some("1"))]),
        ];
        assert!(resolve(&no_merge).is_ok());
        assert_eq!(
            resolve(&s).unwrap_err().to_string(),
            "job 'b': lat_percentiles differs from job 'a' in the same reporting group 0 (as fio, all jobs of a group must agree)"
        );
        let split = vec![
            sec("a", 1, &[]),
            sec(
                "b",
                1,
                &[
                    ("lat_percentiles", Some("1")),
                    ("new_group", None),
                    ("group_reporting", None),
                ],
            ),
        ];
        assert!(resolve(&split).is_ok());
    }

    #[test]
    fn disabled_latencies_have_no_percentiles() {
        let jobs =
            resolve(&[sec("a", 1, &[("disable_clat", None), ("loops", Some("0"))])]).unwrap();
        assert!(!jobs[0].stats.clat_percentiles);
        assert_eq!(jobs[0].timing.loops, 1);
    }

    #[test]
    fn job_count_is_limited() {
        let s = vec![
            sec("a", 1, &[("numjobs", Some("4000"))]),
            sec("b", 1, &[("numjobs", Some("97"))]),
        ];
        assert_eq!(
            resolve(&s).unwrap_err().to_string(),
            "f1:1: job 'b' brings the number of jobs to 4097; at most 4096 are allowed (as in fio)"
        );
    }

    #[test]
    fn first_job_stonewall_does_not_bump_group() {
        let jobs = resolve(&[sec("a", 1, &[("stonewall", None)])]).unwrap();
        assert_eq!(jobs[0].group_id, 0);
    }

    #[test]
    fn globals_apply_below_only() {
        let s = vec![
            sec("a", 1, &[]),
            sec("global", 1, &[("bs", Some("8k"))]),
            sec("b", 1, &[]),
        ];
        let jobs = resolve(&s).unwrap();
        assert_eq!(jobs[0].bs.read.min, 4096);
        assert_eq!(jobs[1].bs.read.min, 8192);
        assert_eq!(
            jobs[1].raw_options,
            vec![("bs".to_string(), "8k".to_string())]
        );
    }

    #[test]
    fn kb_base_applies_to_earlier_sizes() {
        let jobs = resolve(&[sec(
            "a",
            1,
            &[("bs", Some("4k")), ("kb_base", Some("1000"))],
        )])
        .unwrap();
        assert_eq!(jobs[0].bs.read.min, 4000);
    }

    #[test]
    fn engine_option_may_precede_ioengine() {
        let s = vec![
            sec("global", 1, &[("fixedbufs", None)]),
            sec("a", 1, &[("ioengine", Some("io_uring"))]),
        ];
        assert!(resolve(&s).unwrap()[0].engine.fixedbufs);
        let bad = vec![sec("a", 1, &[("fixedbufs", None)])];
        assert_eq!(
            resolve(&bad).unwrap_err().to_string(),
            "f1:1: option 'fixedbufs' belongs to ioengine io_uring/io_uring_cmd; this job uses ioengine psync"
        );
    }

    #[test]
    fn global_options_of_another_engine_are_dropped_with_a_note() {
        let s = vec![
            sec(
                "global",
                1,
                &[("ioengine", Some("io_uring")), ("fixedbufs", None)],
            ),
            sec("a", 1, &[("ioengine", Some("libaio"))]),
            sec("b", 1, &[]),
        ];
        let jobs = resolve(&s).unwrap();
        assert!(!jobs[0].engine.fixedbufs && jobs[1].engine.fixedbufs);
        assert_eq!(
            jobs[0].notes,
            ["`fixedbufs` (set in [global] for ioengine io_uring) does not apply to this job's ioengine libaio; ignored, as in fio"]
        );
        assert!(jobs[1].notes.is_empty());
        assert_eq!(
            jobs[0].raw_options,
            [("ioengine", "io_uring"), ("ioengine", "libaio")]
                .map(|(k, v)| (k.to_string(), v.to_string()))
        );
        // Without an owning engine in [global] it is an error, as in fio.
        let bad = vec![
            sec("global", 1, &[("fixedbufs", None)]),
            sec("a", 1, &[("ioengine", Some("libaio"))]),
        ];
        assert!(resolve(&bad).is_err());
    }

    #[test]
    fn fio_only_options_and_engines_are_recorded() {
        let s = vec![
            sec(
                "global",
                1,
                &[("ioengine", Some("http")), ("gpu_dev_id", Some("1"))],
            ),
            sec(
                "a",
                1,
                &[("http_host", Some("h")), ("gpu_dev_id", Some("2"))],
            ),
            sec("b", 1, &[("ioengine", Some("psync"))]),
        ];
        let jobs = resolve(&s).unwrap();
        assert_eq!(jobs[0].ioengine, "http");
        assert_eq!(
            jobs[0].refusal(),
            [
                "job a: ioengine `http` is a fio engine that fiox does not support yet; this job will not run",
                "job a: `http_host` is a fio option that fiox does not support yet; this job will not run",
                "job a: `gpu_dev_id` is a fio option that fiox does not support yet (needs a CUDA GPU); this job will not run",
            ]
        );
        assert_eq!(jobs[0].unsupported[2].value, "2");
        // b switches to psync: the engine record goes, gpu_dev_id stays.
        assert_eq!(jobs[1].unsupported.len(), 1);
        assert_eq!(jobs[1].unsupported[0].option, "gpu_dev_id");
        let bad = vec![sec(
            "a",
            1,
            &[
                ("ioengine", Some("libaio")),
                ("cmdprio_percentage", Some("50,101")),
            ],
        )];
        assert_eq!(
            resolve(&bad).unwrap_err().to_string(),
            "f1:2: cmdprio_percentage=50,101: 101 is above the maximum 100"
        );
        // rdma's `proto` (verb) and net's `proto` (protocol) are told apart by the engine.
        let rdma = vec![sec(
            "a",
            1,
            &[("ioengine", Some("rdma")), ("proto", Some("read"))],
        )];
        let verb = &resolve(&rdma).unwrap()[0].unsupported[1];
        assert_eq!(
            (verb.option.as_str(), verb.note.as_str()),
            ("verb", "written as `proto`")
        );
        let net = vec![sec(
            "a",
            1,
            &[("ioengine", Some("net")), ("proto", Some("read"))],
        )];
        assert!(resolve(&net).is_err());
    }

    #[test]
    fn derived_depths() {
        let jobs = resolve(&[sec(
            "a",
            1,
            &[("iodepth", Some("32")), ("iodepth_batch_submit", Some("0"))],
        )])
        .unwrap();
        assert_eq!(jobs[0].iodepth_low, 32);
        assert_eq!(jobs[0].iodepth_batch_submit, 32);
        assert_eq!(jobs[0].iodepth_batch_complete_max, 1);
    }

    #[test]
    fn wait_for_checks() {
        let ok = vec![sec("a", 1, &[]), sec("b", 1, &[("wait_for", Some("a"))])];
        assert!(resolve(&ok).is_ok());
        let missing = vec![sec("b", 1, &[("wait_for", Some("a"))])];
        assert_eq!(
            resolve(&missing).unwrap_err().to_string(),
            "f1:1: wait_for=a: no earlier job is named 'a'"
        );
    }

    #[test]
    fn log_prefix_defaults_to_job_name() {
        let jobs = resolve(&[sec("lj", 1, &[("write_lat_log", None)])]).unwrap();
        assert_eq!(jobs[0].logs.write_lat_log.as_deref(), Some("lj"));
    }

    #[test]
    fn own_options_leave_out_globals_as_fios_job_options() {
        let inv = crate::parse_invocation(&[
            "--ioengine=null".to_string(),
            "--name=a".to_string(),
            "--rw=randread".to_string(),
        ])
        .unwrap();
        let j = &inv.jobs[0];
        let own: Vec<(&str, &str)> = j
            .own_options
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(own, [("name", "a"), ("rw", "randread")]);
        assert!(j.raw_options.iter().any(|(k, _)| k == "ioengine"));
    }
}
