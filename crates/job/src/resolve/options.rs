//! One job's options: each looked up in the table (unknown -> did-you-mean, fio-only ->
//! recorded as unsupported), applied in order onto the job, engine-owned options checked
//! against the final engine, `cmdprio` resolved; then the job is derived and checked.

use super::checks::{check_dedupe, check_log_compression_cpus, check_trim_verify};
use super::derive::{derive, zone_count};
use crate::defs::{self, OptDef, Val};
use crate::error::{JobError, Location};
use crate::jobfile::{RawOpt, Section};
use crate::suggest;
use crate::JobSpec;
use std::collections::HashSet;

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

pub(super) fn needs_value(def: &OptDef, o: &RawOpt) -> JobError {
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
pub(super) fn fio_only_note(def: &OptDef, written: &str) -> String {
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
pub(super) fn final_engine(opts: &[RawOpt]) -> Result<&'static str, JobError> {
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
pub(super) fn foreign_global_engine(
    def: &OptDef,
    engine: &str,
    globals: &[RawOpt],
) -> Option<&'static str> {
    if def.engines.is_empty() || def.engines.contains(&engine) {
        return None;
    }
    globals
        .iter()
        .filter(|g| g.name.eq_ignore_ascii_case("ioengine"))
        .filter_map(|g| final_engine(std::slice::from_ref(g)).ok())
        .find(|e| def.engines.contains(e))
}

pub(super) fn apply(job: &mut JobSpec, def: &OptDef, o: &RawOpt) -> Result<(), JobError> {
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

pub(super) fn check_engine_options(
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
pub(super) fn resolve_cmdprio(
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
pub(super) fn offload_note(job: &mut JobSpec) {
    let engine = job.ioengine.as_str().to_ascii_lowercase();
    if job.io_submit_mode == crate::IoSubmitMode::Offload
        && job.iodepth > 1
        && job.ioengine.has(crate::Engine::is_fio_syncio)
    {
        job.notes.push(format!(
            "io_submit_mode=offload with ioengine={engine}: fiox runs iodepth={} submit threads \
             in parallel; fio 3.33 caps a synchronous engine at depth 1 (set iodepth=1 for \
             fio's behaviour)",
            job.iodepth
        ));
    }
}
