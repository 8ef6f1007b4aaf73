//! fio 3.33 options that fiox knows but cannot execute yet: the core options fiox does not
//! implement, the `threads` option of fio's tiobench profile, and the options of every fio
//! engine (including engine options of engines fiox does implement).
//!
//! Each entry has fio's type, range and owning engines: facts read from fio's option tables by
//! `crates/job/tools/gen_fio_only.py` (which regenerates `OPTS` exactly; no help text is taken
//! from fio). Parsing checks the value exactly as for an
//! implemented option, then records the option in [`crate::JobSpec::unsupported`] instead of
//! failing, so `--parse-only` accepts every fio job file while running such a job is refused
//! with a message naming the option. Nothing here changes a job's settings.

use super::{Category as C, Kind as K, OptDef, Val};
use crate::JobSpec;

pub(super) const HELP: &str = "fio option that fiox parses and checks but does not run yet";

/// Check the value by kind and range; the job is left unchanged (the caller records it).
fn check(_: &mut JobSpec, v: &Val) -> Result<(), String> {
    check_one(v, v.raw)
}

fn check_one(v: &Val, raw: &str) -> Result<(), String> {
    let part = Val {
        raw,
        kb_base: v.kb_base,
        def: v.def,
    };
    match v.def.kind {
        K::Bool => part.bool().map(drop),
        K::Int => part.int().map(drop),
        K::Size => part.size().map(drop),
        K::SizeOrPercent => part.size_pct().map(drop),
        K::Time(_) => part.time_us().map(drop),
        K::Choice(_) => part.choice().map(drop),
        K::Complex("list of numbers") => check_number_list(raw),
        K::Str | K::OptStr | K::Complex(_) => Ok(()),
    }
}

/// fio's float lists: numbers separated by `:`.
fn check_number_list(raw: &str) -> Result<(), String> {
    for n in raw.split(':') {
        n.trim()
            .parse::<f64>()
            .map_err(|_| format!("'{}' is not a number (expected N[:N...])", n.trim()))?;
    }
    Ok(())
}

pub(super) const fn known(name: &'static str, kind: K, cat: C) -> OptDef {
    OptDef::new(name, kind, cat, HELP, check)
}

/// Every fio option fiox parses but does not run: fio 3.33's, then those fio added up to 3.42,
/// then fio master's.
pub fn all() -> impl Iterator<Item = &'static OptDef> + Clone {
    OPTS.iter()
        .chain(super::fio342::OPTS)
        .chain(super::fio_master::OPTS)
}

/// Find a fio-only option by name or alias (case-insensitive).
pub fn lookup(name: &str) -> Option<&'static OptDef> {
    all().find(|d| d.matches(name))
}

/// Like [`lookup`], preferring the definition that belongs to `engine` (fio engines may give
/// different options the same name).
pub fn lookup_for(name: &str, engine: &str) -> Option<&'static OptDef> {
    let mut found = all().filter(|d| d.matches(name));
    let first = found.clone().next()?;
    Some(found.find(|d| d.engines.contains(&engine)).unwrap_or(first))
}

/// Is `def` one of these (rather than an implemented option)?
pub fn contains(def: &OptDef) -> bool {
    all().any(|d| std::ptr::eq(d, def))
}

/// The hint shown with an option, if any: why it cannot run here, where that is not just
/// missing work (README lists them all).
pub fn note(def: &OptDef) -> &'static str {
    match def.name {
        "max_open_zones"
        | "job_max_open_zones"
        | "zonecapacity"
        | "zone_reset_frequency"
        | "zone_reset_threshold"
        | "read_beyond_wp"
        | "ignore_zone_limits" => super::unsupported::ZONED,
        "gpu_dev_id" => "needs a CUDA GPU",
        "unique_filename" => "fio's client/server mode",
        _ => "",
    }
}

/// Every fio-only option, sorted by name.
pub static OPTS: &[OptDef] = &[
    known("bindname", K::Str, C::Engine).engines(&["rdma"]),
    known("brick", K::Str, C::Engine).engines(&["gfapi", "gfapi_async"]),
    known("busy_poll", K::Bool, C::Engine).engines(&["rados", "rbd"]),
    known("busy_wait_polling", K::Bool, C::Engine).engines(&[
        "librpma_apm_client",
        "librpma_apm_server",
        "librpma_gpspm_client",
        "librpma_gpspm_server",
    ]),
    known("chunk_size", K::Int, C::Engine)
        .alias(&["chunck_size"])
        .engines(&["dfs", "libhdfs"]),
    known("clientname", K::Str, C::Engine).engines(&["rados", "rbd"]),
    known("clustername", K::Str, C::Engine).engines(&["rados", "rbd"]),
    known("conf", K::Str, C::Engine).engines(&["rados"]),
    known("cont", K::Str, C::Engine).engines(&["dfs"]),
    known("cuda_io", K::Choice(&["cufile", "posix"]), C::Engine).engines(&["libcufile"]),
    known("direct_write_to_pmem", K::Bool, C::Engine).engines(&[
        "librpma_apm_client",
        "librpma_apm_server",
        "librpma_gpspm_client",
        "librpma_gpspm_server",
    ]),
    known("gpu_dev_id", K::Int, C::General),
    known("gpu_dev_ids", K::Str, C::Engine).engines(&["libcufile", "libhipfile"]),
    known("hdfs_use_direct", K::Bool, C::Engine).engines(&["libhdfs"]),
    known("hdfsdirectory", K::Str, C::Engine).engines(&["libhdfs"]),
    known("hostname", K::Str, C::Engine).engines(&["libhdfs", "rdma"]),
    known("http_host", K::Str, C::Engine).engines(&["http"]),
    known(
        "http_mode",
        K::Choice(&["webdav", "s3", "swift"]),
        C::Engine,
    )
    .engines(&["http"]),
    known("http_pass", K::Str, C::Engine).engines(&["http"]),
    known("http_s3_key", K::Str, C::Engine).engines(&["http"]),
    known("http_s3_keyid", K::Str, C::Engine).engines(&["http"]),
    known("http_s3_region", K::Str, C::Engine).engines(&["http"]),
    known("http_s3_sse_customer_algorithm", K::Str, C::Engine).engines(&["http"]),
    known("http_s3_sse_customer_key", K::Str, C::Engine).engines(&["http"]),
    known("http_s3_storage_class", K::Str, C::Engine).engines(&["http"]),
    known("http_swift_auth_token", K::Str, C::Engine).engines(&["http"]),
    known("http_user", K::Str, C::Engine).engines(&["http"]),
    known("http_verbose", K::Int, C::Engine).engines(&["http"]),
    known("https", K::Choice(&["off", "on", "insecure"]), C::Engine).engines(&["http"]),
    known("ignore_zone_limits", K::Bool, C::Io),
    known("initiator", K::Str, C::Engine).engines(&["libiscsi"]),
    known("job_max_open_zones", K::Int, C::Io),
    known("max_open_zones", K::Int, C::Io),
    known("namenode", K::Str, C::Engine).engines(&["libhdfs"]),
    known("nfs_url", K::Str, C::Engine).engines(&["nfs"]),
    known("no_completion_thread", K::Bool, C::Engine).engines(&["windowsaio"]),
    known("object_class", K::Str, C::Engine).engines(&["dfs"]),
    known("pool", K::Str, C::Engine).engines(&["dfs", "rados", "rbd"]),
    known("port", K::Int, C::Engine).range(1, 65535).engines(&[
        "libhdfs",
        "librpma_apm_client",
        "librpma_apm_server",
        "librpma_gpspm_client",
        "librpma_gpspm_server",
        "rdma",
    ]),
    known("rbdname", K::Str, C::Engine).engines(&["rbd"]),
    known("read_beyond_wp", K::Bool, C::Io),
    known("readfua", K::Bool, C::Engine).engines(&["io_uring", "io_uring_cmd", "sg"]),
    known("serverip", K::Str, C::Engine).engines(&[
        "librpma_apm_client",
        "librpma_apm_server",
        "librpma_gpspm_client",
        "librpma_gpspm_server",
    ]),
    known(
        "sg_write_mode",
        K::Choice(&[
            "write",
            "write_and_verify",
            "verify",
            "write_same",
            "same",
            "write_same_ndob",
            "verify_bytchk_00",
            "verify_bytchk_01",
            "verify_bytchk_11",
            "write_stream",
        ]),
        C::Engine,
    )
    .engines(&["sg"]),
    known("single-instance", K::Bool, C::Engine).engines(&["gfapi", "gfapi_async"]),
    known("single_instance", K::Bool, C::Engine).engines(&["libhdfs"]),
    known("skip_bad", K::Bool, C::Engine).engines(&["mtd"]),
    known("stream_id", K::Int, C::Engine).engines(&["sg"]),
    known("svcl", K::Str, C::Engine).engines(&["dfs"]),
    known("thp", K::Int, C::Engine).engines(&["mmap"]),
    known("touch_objects", K::Bool, C::Engine).engines(&["rados"]),
    known("unique_filename", K::Bool, C::Files),
    known("uri", K::Str, C::Engine).engines(&["nbd"]),
    known(
        "verb",
        K::Choice(&["write", "read", "send", "recv"]),
        C::Engine,
    )
    .alias(&["proto"])
    .engines(&["rdma"]),
    known("volume", K::Str, C::Engine).engines(&["gfapi", "gfapi_async"]),
    known("writefua", K::Bool, C::Engine).engines(&["io_uring", "io_uring_cmd", "sg"]),
    known("xnvme_admin", K::Str, C::Engine).engines(&["xnvme"]),
    known("xnvme_async", K::Str, C::Engine).engines(&["xnvme"]),
    known("xnvme_be", K::Str, C::Engine).engines(&["xnvme"]),
    known("xnvme_dev_nsid", K::Int, C::Engine).engines(&["xnvme"]),
    known("xnvme_iovec", K::Bool, C::Engine).engines(&["xnvme"]),
    known("xnvme_sync", K::Str, C::Engine).engines(&["xnvme"]),
    known("zone_reset_frequency", K::Complex("list of numbers"), C::Io),
    known("zone_reset_threshold", K::Complex("list of numbers"), C::Io),
    known("zonecapacity", K::Size, C::Io),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn check_raw(d: &OptDef, raw: &str) -> Result<(), String> {
        let v = Val {
            raw,
            kb_base: 1024,
            def: d,
        };
        (d.apply)(&mut JobSpec::default(), &v)
    }

    /// A value fio accepts for this definition, and one it rejects (None for free text).
    fn samples(d: &OptDef) -> (String, Option<&'static str>) {
        let in_range = |v: i64| match d.range {
            Some((lo, hi)) => v.clamp(lo, hi),
            None => v,
        };
        match d.kind {
            K::Bool => ("1".into(), Some("maybe")),
            K::Int => (in_range(1).to_string(), Some("lots")),
            K::Size => (in_range(4096).to_string(), Some("4q")),
            K::SizeOrPercent => ("10%".into(), Some("4q")),
            K::Time(_) => ("10ms".into(), Some("10x")),
            K::Choice(list) => (list[0].to_string(), Some("no-such-word")),
            K::Complex("list of numbers") => ("1.5:2".into(), Some("1:x")),
            K::Str | K::OptStr | K::Complex(_) => ("anything".into(), None),
        }
    }

    #[test]
    fn every_entry_checks_its_values() {
        for d in OPTS {
            let (good, bad) = samples(d);
            assert_eq!(check_raw(d, &good), Ok(()), "{}={good}", d.name);
            if let Some(bad) = bad {
                assert!(check_raw(d, bad).is_err(), "{}={bad} accepted", d.name);
            }
        }
    }

    #[test]
    fn ranges_and_per_direction_values() {
        // Options move out of this table as fiox implements them; the checks stay.
        let find = |n: &str| lookup(n).or_else(|| crate::defs::lookup(n)).unwrap();
        assert!(check_raw(find("trim_percentage"), "101").is_err());
        assert!(check_raw(find("max_latency"), "1,2,3,4").is_err());
        assert!(check_raw(find("dedupe_working_set_percentage"), "101").is_err());
        assert!(check_raw(find("cgroup_weight"), "1001").is_err());
        // fio reads these integers as times (is_time).
        let t = find("steadystate_check_interval");
        assert_eq!(check_raw(t, "2m"), Ok(()));
        assert_eq!(
            check_raw(t, "10x"),
            Err("bad time suffix 'x' in '10x' (expected us, ms, s, m, h or d)".into())
        );
    }

    #[test]
    fn engines_may_share_a_name() {
        assert_eq!(lookup_for("proto", "rdma").unwrap().name, "verb");
        // net's `protocol` (alias `proto`) is fiox's own now: the fio-only table has rdma's.
        assert_eq!(crate::defs::lookup("proto").unwrap().name, "protocol");
        assert_eq!(lookup("chunck_size").unwrap().name, "chunk_size");
        assert!(contains(lookup("gpu_dev_id").unwrap()));
        assert!(!contains(crate::defs::lookup("bs").unwrap()));
        assert_eq!(note(lookup("gpu_dev_id").unwrap()), "needs a CUDA GPU");
        // tiobench's `threads` and `profile=` run (noted) as in fio: not fio-only any more.
        assert!(lookup("threads").is_none() && lookup("profile").is_none());
    }
}
