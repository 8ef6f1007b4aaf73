//! Statistics, logging and verification options.

use super::{Category as C, Kind as K, OptDef};
use crate::value;
use crate::VerifyMethod;

pub(super) static OPTS: &[OptDef] = &[
    OptDef::new("block_error_percentiles", K::Bool, C::Stats, "Histogram of trims per block", |j, v| {
        j.stats.block_error_percentiles = v.bool()?;
        Ok(())
    })
    .def("0")
    .long("fio's block error histogram: every trim-sized block of the job's one file counts its trims and its state (unwritten, trimmed, or a failed trim or write); the report gives the percentiles (percentile_list) of the trim counts of the touched blocks and the blocks per state (`block lifetime percentiles`, JSON `block`). At most 8192 blocks. fio 3.33 aborts (an assertion) as soon as a block was trimmed; fiox reports what fio's code means to."),
    OptDef::new("percentile_list", K::Complex("p:p:p... (each 0..100, at most 20)"), C::Stats, "Latency percentiles to report", |j, v| {
        let mut list = Vec::new();
        for p in v.raw.split(':').map(str::trim).filter(|p| !p.is_empty()) {
            let f = value::parse_float(p)?;
            if !(0.0..=100.0).contains(&f) {
                return Err(format!("percentile {f} is outside 0..100"));
            }
            list.push(f);
        }
        if list.is_empty() || list.len() > 20 {
            return Err(format!("between 1 and 20 percentiles are allowed (got {})", list.len()));
        }
        list.sort_by(f64::total_cmp);
        j.stats.percentile_list = list;
        Ok(())
    })
    .def("1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99"),
    OptDef::new("clat_percentiles", K::Bool, C::Stats, "Report completion latency percentiles", |j, v| {
        j.stats.clat_percentiles = v.bool()?;
        Ok(())
    })
    .def("1"),
    OptDef::new("lat_percentiles", K::Bool, C::Stats, "Report total latency percentiles", |j, v| {
        j.stats.lat_percentiles = v.bool()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("slat_percentiles", K::Bool, C::Stats, "Report submission latency percentiles", |j, v| {
        j.stats.slat_percentiles = v.bool()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("disable_lat", K::Bool, C::Stats, "Do not measure total latency", |j, v| {
        j.stats.disable_lat = v.bool()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("disable_clat", K::Bool, C::Stats, "Do not measure completion latency", |j, v| {
        j.stats.disable_clat = v.bool()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("disable_slat", K::Bool, C::Stats, "Do not measure submission latency", |j, v| {
        j.stats.disable_slat = v.bool()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("disable_bw_measurement", K::Bool, C::Stats, "Do not sample bandwidth/IOPS", |j, v| {
        j.stats.disable_bw = v.bool()?;
        Ok(())
    })
    .alias(&["disable_bw"])
    .def("0"),
    OptDef::new("gtod_reduce", K::Bool, C::Stats, "Take fewer timestamps: disables latency and bandwidth measurement", |j, v| {
        j.stats.gtod_reduce = v.bool()?;
        if j.stats.gtod_reduce {
            // fio switches these off at the point gtod_reduce is parsed, so later options can
            // turn single measurements back on.
            j.stats.disable_lat = true;
            j.stats.disable_clat = true;
            j.stats.disable_slat = true;
            j.stats.disable_bw = true;
            j.stats.clat_percentiles = false;
            j.stats.lat_percentiles = false;
            j.stats.slat_percentiles = false;
        }
        Ok(())
    })
    .def("0"),
    OptDef::new("bwavgtime", K::Time("ms"), C::Stats, "Bandwidth sampling interval", |j, v| {
        j.stats.bwavgtime = v.duration()?;
        Ok(())
    })
    .def("500"),
    OptDef::new("iopsavgtime", K::Time("ms"), C::Stats, "IOPS sampling interval", |j, v| {
        j.stats.iopsavgtime = v.duration()?;
        Ok(())
    })
    .def("500"),
    OptDef::new("significant_figures", K::Int, C::Stats, "Digits of sizes, rates and IOPS in the normal report", |j, v| {
        j.stats.sig_figs = v.u32()?;
        Ok(())
    })
    .range(1, 10)
    .def("4"),
    OptDef::new("disk_util", K::Bool, C::Stats, "Report disk utilization (the Disk stats block)", |j, v| {
        j.stats.disk_util = v.bool()?;
        Ok(())
    })
    .def("1")
    .long("As fio: when any job sets it to 0, no disk is watched and the Disk stats block (disk_util in JSON) is left out."),
    OptDef::new("stats", K::Bool, C::Stats, "Collect statistics for this job", |j, v| {
        j.stats.stats = v.bool()?;
        Ok(())
    })
    .def("1"),
    OptDef::new("write_iolog", K::Str, C::Logs, "Write fio's I/O log (version 3) of every I/O to this file", |j, v| {
        let p = v.str();
        if p.is_empty() {
            return Err("needs a file name".into());
        }
        j.logs.write_iolog = Some(p.to_string());
        Ok(())
    })
    .long("One line per file action (`add`, `open`, `close`) and per I/O (`read`, `write`, `trim`, `sync`, `datasync` with offset and length), each stamped in microseconds since the log began; `read_iolog` replays it."),
    OptDef::new("log_compression", K::Int, C::Logs, "Keep logs in memory, compressed in chunks of this size by a background thread", |j, v| {
        j.logs.log_compression = v.u64()?;
        Ok(())
    })
    .range(1024, i64::MAX)
    .long("As fio: the bw/iops/lat/histogram logs are buffered in memory; each full chunk of this many bytes is compressed (zlib) by the job's log compression thread, and at the job's end the chunks are inflated into the text log (or stored as they are with log_store_compressed). Without it fiox writes each line as it comes."),
    OptDef::new("log_compression_cpus", K::Complex("cpu list, e.g. 0-3,6"), C::Logs, "CPUs the log compression thread may run on", |j, v| {
        j.logs.log_compression_cpus = Some(super::general::parse_cpu_list(v.raw)?);
        Ok(())
    })
    .long("Pins the thread that compresses the logs (log_compression); without log_compression there is no such thread, and a note says so (fio ignores it then)."),
    OptDef::new("log_store_compressed", K::Bool, C::Logs, "Store the bw/iops/lat logs compressed, as fio's .log.fz files", |j, v| {
        j.logs.log_store_compressed = v.bool()?;
        Ok(())
    })
    .def("0")
    .long("fio's format: its binary samples in zlib streams; `--inflate-log=FILE` (fio's or fiox's) prints the text log. write_hist_log is stored as text."),
    OptDef::new("write_bw_log", K::OptStr, C::Logs, "Write a bandwidth log with this prefix", |j, v| {
        j.logs.write_bw_log = Some(v.str().to_string());
        Ok(())
    })
    .long("Creates PREFIX_bw.N.log; without a prefix the job name is used."),
    OptDef::new("write_lat_log", K::OptStr, C::Logs, "Write latency logs with this prefix", |j, v| {
        j.logs.write_lat_log = Some(v.str().to_string());
        Ok(())
    })
    .long("Creates PREFIX_lat.N.log, PREFIX_clat.N.log and PREFIX_slat.N.log; without a prefix the job name is used."),
    OptDef::new("write_iops_log", K::OptStr, C::Logs, "Write an IOPS log with this prefix", |j, v| {
        j.logs.write_iops_log = Some(v.str().to_string());
        Ok(())
    }),
    OptDef::new("write_hist_log", K::OptStr, C::Logs, "Write latency histogram logs with this prefix", |j, v| {
        j.logs.write_hist_log = Some(v.str().to_string());
        Ok(())
    }),
    OptDef::new("log_avg_msec", K::Time("ms"), C::Logs, "Average log entries over this period (0 = every I/O)", |j, v| {
        j.logs.log_avg_msec = v.time_us()? / 1000;
        Ok(())
    })
    .def("0"),
    OptDef::new("log_hist_msec", K::Time("ms"), C::Logs, "Histogram log interval", |j, v| {
        j.logs.log_hist_msec = v.time_us()? / 1000;
        Ok(())
    })
    .def("0"),
    OptDef::new("log_hist_coarseness", K::Int, C::Logs, "Sum histogram log buckets in groups of 2^N (0-6)", |j, v| {
        j.logs.log_hist_coarseness = v.u32()?;
        Ok(())
    })
    .def("0")
    .long("Each line of the write_hist_log then has 1856 >> N bucket columns (fio 3.33's buckets; its help text still says 1216); values over 6 count as 6."),
    OptDef::new("log_max_value", K::Bool, C::Logs, "Averaged log lines hold the window's maximum", |j, v| {
        j.logs.log_max_value = v.bool()?;
        Ok(())
    })
    .def("0")
    .long("With log_avg_msec, each line of the bw, iops and latency logs holds the largest sample of its window instead of the mean."),
    OptDef::new("log_window_value", K::Choice(&["avg", "max", "both", "0", "1"]), C::Logs, "What averaged log lines hold: avg, max or both (fio 3.42)", |j, v| {
        let c = v.choice()?;
        j.logs.log_max_value = matches!(c.as_str(), "max" | "1");
        j.logs.log_window_both = c == "both";
        Ok(())
    })
    .def("avg")
    .long("fio 3.42's successor of log_max_value (`0` and `1` are `avg` and `max`). `both`: every line of the bw, iops and latency logs gets a second value column after the first, the window's largest sample next to its mean (0 in per-I/O lines). Not yet with log_store_compressed."),
    OptDef::new("log_unix_epoch", K::Bool, C::Logs, "Log times are Unix epoch milliseconds", |j, v| {
        j.logs.log_unix_epoch = v.bool()?;
        Ok(())
    })
    .def("0")
    .long("The time column is the clock's time in ms (CLOCK_REALTIME, or log_alternate_epoch_clock_id) instead of the time since the job began: fio adds the clock's time at the job's start to each sample."),
    OptDef::new("log_alternate_epoch", K::Bool, C::Logs, "Log times count from the epoch of log_alternate_epoch_clock_id", |j, v| {
        j.logs.log_alternate_epoch = v.bool()?;
        Ok(())
    })
    .def("0")
    .long("As log_unix_epoch (fio treats the two alike), with the clock given by log_alternate_epoch_clock_id."),
    OptDef::new("log_alternate_epoch_clock_id", K::Int, C::Logs, "clock_gettime(2) clock of log_unix_epoch/log_alternate_epoch", |j, v| {
        j.logs.log_epoch_clock_id = i32::try_from(v.int()?).map_err(|_| "not a clock id".to_string())?;
        Ok(())
    })
    .def("0")
    .long("0 is CLOCK_REALTIME, 1 CLOCK_MONOTONIC, 7 CLOCK_BOOTTIME...; a clock the kernel does not know fails the job (EINVAL)."),
    OptDef::new("job_start_clock_id", K::Int, C::Logs, "clock_gettime(2) clock of the JSON report's job_start (fio 3.42)", |j, v| {
        j.logs.job_start_clock_id = Some(i32::try_from(v.int()?).map_err(|_| "not a clock id".to_string())?);
        Ok(())
    })
    .long("fio 3.42's option: the job's JSON object gets `job_start`, this clock's time in ms when the job's epoch began (its start, then the end of its ramp), as fio 3.42 prints it (0 is CLOCK_REALTIME, 1 CLOCK_MONOTONIC...). Unset, the JSON stays fio 3.33's, without the field. A clock the kernel does not know fails the job (EINVAL)."),
    OptDef::new("log_entries", K::Int, C::Logs, "fio's initial in-memory log size, in samples", |j, v| {
        j.logs.log_entries = v.u64()?;
        Ok(())
    })
    .def("1024")
    .range(1024, 1024 * 1024)
    .long("fio keeps samples in memory and grows its log from this size; fiox writes each log as it goes, so the option changes no output (the value is checked as fio checks it)."),
    OptDef::new("per_job_logs", K::Bool, C::Logs, "Put the job number in log file names", |j, v| {
        j.logs.per_job_logs = v.bool()?;
        Ok(())
    })
    .def("1"),
    OptDef::new("log_offset", K::Bool, C::Logs, "Add the I/O offset to each log line", |j, v| {
        j.logs.log_offset = v.bool()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("log_issue_time", K::Bool, C::Logs, "End clat/slat log lines with the I/O's issue time (fio 3.42)", |j, v| {
        j.logs.log_issue_time = v.bool()?;
        Ok(())
    })
    .def("0")
    .long("fio 3.42's option: every line of every log gets a last column, the issue time in ns since the job's epoch for clat and slat log lines and 0 in the others (lat, bw, iops, averaged lines). Needs `write_lat_log` and `log_offset` (the job is refused otherwise, as fio refuses it); not yet with `log_store_compressed`."),
    OptDef::new("log_prio", K::Bool, C::Logs, "Log each I/O's priority value (hex) instead of 1 for real-time, 0 otherwise", |j, v| {
        j.logs.log_prio = v.bool()?;
        Ok(())
    })
    .def("0")
    .long("The last column of bw/iops/lat/clat/slat logs becomes the ioprio value as fio prints it (`0x2004`: class 1 << 13 | level 4)."),
    OptDef::new("verify", K::Choice(&["0", "none", "md5", "crc64", "crc32c", "crc32c-intel", "crc32", "crc16", "crc7", "sha1", "sha256", "sha512", "sha3-224", "sha3-256", "sha3-384", "sha3-512", "xxhash", "pattern", "pattern_hdr", "null", "meta"]), C::Verify, "Checksum written data and verify it", |j, v| {
        super::forget(j, "verify");
        let word = v.choice()?;
        j.verify.method_given = true;
        match parse_verify(&word) {
            Some(m) => j.verify.method = m,
            // A choice parse_verify has no method for (none at present): the job is refused
            // when run rather than verified some other way.
            None => super::record_value(j, "verify", &word, ""),
        }
        Ok(())
    })
    .def("0")
    .long("Writes carry a checksum header (or the verify_pattern) and are read back and checked after the write phase (or continuously with verify_backlog)."),
    OptDef::new("do_verify", K::Bool, C::Verify, "Run the verify phase after writing", |j, v| {
        j.verify.do_verify = v.bool()?;
        Ok(())
    })
    .def("1"),
    OptDef::new("verify_only", K::Bool, C::Verify, "Only verify data written earlier", |j, v| {
        j.verify.verify_only = v.bool()?;
        Ok(())
    }),
    OptDef::new("verify_strict", K::Bool, C::Verify, "Also check that this job wrote each block (fiox)", |j, v| {
        j.verify.verify_strict = v.bool()?;
        Ok(())
    })
    .def("0")
    .long("fiox's own option (fio has none). Off: like fio, a block verifies when its header is intact, for its offset and length, and its data matches, whichever job or tool (fio or fiox) wrote it; the verify phase of a writing job also checks the write number (a lost write reads back as stale data). On: the header must also carry this job's thread number and the write seed of the expected write, so data of another job or run is reported. verify_only is fio's unless this is on: the write number is checked only in blocks this job's own writes carry (fio 3.33 checks none there), so data fio wrote verifies."),
    OptDef::new("verify_write_sequence", K::Bool, C::Verify, "Check the header's write number (fio 3.42)", |j, v| {
        j.verify.verify_write_sequence = Some(v.bool()?);
        Ok(())
    })
    .def("1")
    .long("fio 3.42's option. On (default): a block that is intact but holds an older or newer write than the write log expects is reported (stale or newer data), in writing jobs' verify phases. Off: only the block's integrity, offset and length are checked, so data of a lost or reordered write verifies (fio: useful with atomic writes, where the checksum must still match)."),
    OptDef::new("verify_header_seed", K::Bool, C::Verify, "Check the header's data seed (fio 3.42)", |j, v| {
        j.verify.verify_header_seed = Some(v.bool()?);
        Ok(())
    })
    .long("fio 3.42's option (fio's default is 1; fiox's is unset). Set to 1: a block whose header carries another data seed than the expected write's is reported (fio's \"bad header rand_seed\"), even without `verify_strict`. Set to 0: the seed is never checked, even with `verify_strict`. Unset: `verify_strict` decides, since fiox's verify accepts what fio or another job wrote unless asked."),
    OptDef::new("verify_fatal", K::Bool, C::Verify, "Stop at the first verify failure", |j, v| {
        j.verify.verify_fatal = v.bool()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("verify_dump", K::Bool, C::Verify, "Dump good and bad blocks on a verify failure", |j, v| {
        j.verify.verify_dump = v.bool()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("verify_async", K::Int, C::Verify, "Threads that verify asynchronously", |j, v| {
        j.verify.verify_async = v.u32()?;
        Ok(())
    })
    .def("0")
    .range(0, 1024),
    OptDef::new("verify_async_cpus", K::Complex("cpu list, e.g. 0-3,6"), C::Verify, "CPUs the verify_async threads may run on", |j, v| {
        j.verify.verify_async_cpus = Some(super::general::parse_cpu_list(v.raw)?);
        Ok(())
    })
    .long("Comma-separated CPU numbers and ranges (`0-3,6`), as cpus_allowed; applies to the threads of verify_async (none without it)."),
    OptDef::new("verifysort", K::Str, C::Verify, "Deprecated in fio (no effect)", |j, _| {
        j.notes.push("Option verifysort is deprecated (fio ignores it)".into());
        Ok(())
    }),
    OptDef::new("verifysort_nr", K::Str, C::Verify, "Deprecated in fio (no effect)", |j, _| {
        j.notes.push("Option verifysort_nr is deprecated (fio ignores it)".into());
        Ok(())
    }),
    OptDef::new("verify_backlog", K::Int, C::Verify, "Verify after every N written blocks", |j, v| {
        j.verify.verify_backlog = v.u64()?;
        Ok(())
    }),
    OptDef::new("verify_backlog_batch", K::Int, C::Verify, "Blocks verified per backlog round", |j, v| {
        j.verify.verify_backlog_batch = v.u64()?;
        Ok(())
    }),
    OptDef::new("verify_interval", K::Size, C::Verify, "Write a verify header every N bytes", |j, v| {
        j.verify.verify_interval = Some(v.size()?);
        Ok(())
    })
    .range(2, 1 << 40)
    .long("As fio: without it, one header per block, or with varying write sizes (bsrange, bssplit) one per smallest write. A value above the smallest write (in a job that also reads, above the smallest read) is cut to it, and one that does not divide both the smallest and the largest write becomes their greatest common divisor, so fiox's headers sit where fio's do."),
    OptDef::new("verify_offset", K::Size, C::Verify, "Place the verify header N bytes into the block", |j, v| {
        j.verify.verify_offset = v.size()?;
        Ok(())
    })
    // fio's minimum: the size of its verify header (struct verify_header, 40 bytes).
    .range(40, 1 << 40),
    OptDef::new("verify_pattern", K::Complex("pattern: 0xHEX, \"text\", decimal, 'file', %o (write offset), concatenated"), C::Verify, "Fill and check blocks with this pattern", |j, v| {
        super::forget(j, "verify_pattern");
        let raw = v.raw.trim();
        let (bytes, offsets) = parse_verify_pattern(raw)?;
        j.verify.verify_pattern = bytes;
        j.verify.verify_pattern_offsets = offsets;
        // fio: a pattern without verify= turns on verification of it, with a header (fio's
        // VERIFY_PATTERN, `pattern_hdr`); any verify= (0 too, before or after) decides alone.
        if !j.verify.method_given {
            j.verify.method = VerifyMethod::PatternHdr;
        }
        Ok(())
    })
    .long("Parts are concatenated: 0x hex bytes (in the order written), \"text\", decimal integers (little-endian, as few bytes as the value needs), 'file' (the file's first bytes, as many as still fit in the 512-byte pattern; the name is relative to the working directory) and %o, 8 bytes that hold the offset of each write (little-endian) when it is written and checked (at most 8 %o, as in fio). The pattern repeats from the start of each write. Without verify=, blocks get a verify header and the pattern is checked (fio's pattern_hdr)."),
    OptDef::new("verify_state_save", K::Bool, C::Verify, "Save verify state when the job ends", |j, v| {
        j.verify.verify_state_save = v.bool()?;
        Ok(())
    })
    .def("1"),
    OptDef::new("verify_state_load", K::Bool, C::Verify, "Load saved verify state before verifying", |j, v| {
        j.verify.verify_state_load = v.bool()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("experimental_verify", K::Bool, C::Verify, "Verify by replaying the I/O sequence", |j, v| {
        j.verify.experimental_verify = v.bool()?;
        Ok(())
    })
    .def("0")
    .long("As fio: the verify phase regenerates the job's I/O sequence from its seeds instead of keeping a log of the writes: each write is read back and must hold exactly that write (an overwritten block fails), each trim must read back as zeroes, reads are skipped; it stops once as many bytes were verified as the write phase wrote and trimmed. No verify_backlog then (fio keeps no log)."),
    OptDef::new("trim_percentage", K::Int, C::Verify, "Share of verified writes to trim (discard)", |j, v| {
        j.verify.trim_percentage = v.u32()?;
        Ok(())
    })
    .def("0")
    .range(0, 100)
    .long("fio's verify-trim: each write logged for verification is picked with this probability (the job's trim random stream); with trim_backlog the picked blocks are trimmed during the write phase, and the verify phase checks that they read back as zeroes (trim_verify_zero). As in fio 3.33, it needs a workload that trims (rw=trimwrite or randtrimwrite; fio aborts otherwise) and without trim_backlog nothing is trimmed."),
    OptDef::new("trim_verify_zero", K::Bool, C::Verify, "Trimmed blocks must read back as zeroes", |j, v| {
        j.verify.trim_verify_zero = v.bool()?;
        Ok(())
    })
    .def("1")
    .long("Off: trimmed blocks are dropped from verification instead."),
    OptDef::new("trim_backlog", K::Size, C::Verify, "Trim the picked writes every N logged writes", |j, v| {
        j.verify.trim_backlog = v.size()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("trim_backlog_batch", K::Int, C::Verify, "Trims per trim_backlog round", |j, v| {
        j.verify.trim_backlog_batch = v.u64()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("serialize_overlap", K::Bool, C::Verify, "Never have overlapping I/Os in flight", |j, v| {
        j.verify.serialize_overlap = v.bool()?;
        Ok(())
    })
    .def("0"),
];

/// fio's pattern formats: `%o` reserves 8 bytes for the offset of each write (fio's
/// `paste_blockoff`, `io_u->offset` little-endian).
const OFFSET_FORMAT: &str = "%o";
const OFFSET_LEN: usize = 8;
/// fio keeps at most this many formats per pattern (`verify_fmt[8]` in thread_options.h).
const MAX_FORMATS: usize = 8;

/// `verify_pattern=` as fio parses it: the bytes of the pattern and the positions of the 8
/// bytes each `%o` reserves (zeros here; the verifier pastes each write's offset there). A `%`
/// inside a "string" is a plain character; any other `%` format is an error, as in fio.
fn parse_verify_pattern(raw: &str) -> Result<(Vec<u8>, Vec<usize>), String> {
    super::workload::parse_fio_pattern(raw, Some((OFFSET_FORMAT, OFFSET_LEN, MAX_FORMATS)))
}

/// fiox's method for a `verify=` word already checked against the choice list.
fn parse_verify(s: &str) -> Option<VerifyMethod> {
    Some(match s {
        "0" | "none" => VerifyMethod::None,
        "md5" => VerifyMethod::Md5,
        "crc64" => VerifyMethod::Crc64,
        "crc32c" | "crc32c-intel" => VerifyMethod::Crc32c,
        "crc32" => VerifyMethod::Crc32,
        "crc16" => VerifyMethod::Crc16,
        "crc7" => VerifyMethod::Crc7,
        "sha1" => VerifyMethod::Sha1,
        "sha256" => VerifyMethod::Sha256,
        "sha512" => VerifyMethod::Sha512,
        "sha3-224" => VerifyMethod::Sha3_224,
        "sha3-256" => VerifyMethod::Sha3_256,
        "sha3-384" => VerifyMethod::Sha3_384,
        "sha3-512" => VerifyMethod::Sha3_512,
        "xxhash" => VerifyMethod::Xxhash,
        "pattern" => VerifyMethod::Pattern,
        // fio 3.42's name for what verify_pattern alone gives (VERIFY_PATTERN): a header,
        // the pattern after it.
        "pattern_hdr" => VerifyMethod::PatternHdr,
        "null" => VerifyMethod::Null,
        "meta" => VerifyMethod::Meta,
        _ => return None,
    })
}

#[cfg(test)]
pub(super) use tests::CASES;

#[cfg(test)]
mod tests {
    use super::super::testutil::{run, Case};
    use super::*;
    use std::time::Duration;

    pub static CASES: &[Case] = &[
        (
            "percentile_list",
            "99.9:50",
            Some(|j| j.stats.percentile_list == vec![50.0, 99.9]),
        ),
        ("percentile_list", "50:101", None),
        ("clat_percentiles", "0", Some(|j| !j.stats.clat_percentiles)),
        ("lat_percentiles", "1", Some(|j| j.stats.lat_percentiles)),
        ("slat_percentiles", "1", Some(|j| j.stats.slat_percentiles)),
        ("disable_lat", "1", Some(|j| j.stats.disable_lat)),
        ("disable_clat", "1", Some(|j| j.stats.disable_clat)),
        ("disable_slat", "1", Some(|j| j.stats.disable_slat)),
        ("disable_bw_measurement", "1", Some(|j| j.stats.disable_bw)),
        ("disable_bw", "1", Some(|j| j.stats.disable_bw)),
        (
            "gtod_reduce",
            "1",
            Some(|j| {
                j.stats.gtod_reduce
                    && j.stats.disable_lat
                    && j.stats.disable_bw
                    && !j.stats.clat_percentiles
            }),
        ),
        (
            "gtod_reduce",
            "0",
            Some(|j| !j.stats.disable_lat && j.stats.clat_percentiles),
        ),
        (
            "bwavgtime",
            "1000",
            Some(|j| j.stats.bwavgtime == Duration::from_secs(1)),
        ),
        (
            "iopsavgtime",
            "250",
            Some(|j| j.stats.iopsavgtime == Duration::from_millis(250)),
        ),
        ("stats", "0", Some(|j| !j.stats.stats)),
        ("significant_figures", "6", Some(|j| j.stats.sig_figs == 6)),
        (
            "write_iolog",
            "io.log",
            Some(|j| j.logs.write_iolog.as_deref() == Some("io.log")),
        ),
        (
            "log_compression",
            "1m",
            Some(|j| j.logs.log_compression == 1 << 20),
        ),
        ("log_compression", "512", None),
        (
            "log_compression_cpus",
            "0-1,3",
            Some(|j| j.logs.log_compression_cpus == Some(vec![0, 1, 3])),
        ),
        ("log_compression_cpus", "2-1", None),
        (
            "log_store_compressed",
            "1",
            Some(|j| j.logs.log_store_compressed),
        ),
        ("significant_figures", "11", None),
        ("disk_util", "0", Some(|j| !j.stats.disk_util)),
        (
            "write_bw_log",
            "bw",
            Some(|j| j.logs.write_bw_log.as_deref() == Some("bw")),
        ),
        (
            "write_lat_log",
            "",
            Some(|j| j.logs.write_lat_log.as_deref() == Some("")),
        ),
        (
            "write_iops_log",
            "io",
            Some(|j| j.logs.write_iops_log.as_deref() == Some("io")),
        ),
        (
            "write_hist_log",
            "h",
            Some(|j| j.logs.write_hist_log.as_deref() == Some("h")),
        ),
        (
            "log_avg_msec",
            "1000",
            Some(|j| j.logs.log_avg_msec == 1000),
        ),
        (
            "log_hist_msec",
            "2s",
            Some(|j| j.logs.log_hist_msec == 2000),
        ),
        (
            "log_hist_coarseness",
            "3",
            Some(|j| j.logs.log_hist_coarseness == 3),
        ),
        ("log_hist_coarseness", "-1", None),
        ("log_max_value", "1", Some(|j| j.logs.log_max_value)),
        (
            "log_window_value",
            "both",
            Some(|j| j.logs.log_window_both && !j.logs.log_max_value),
        ),
        ("log_unix_epoch", "1", Some(|j| j.logs.log_unix_epoch)),
        (
            "log_alternate_epoch",
            "1",
            Some(|j| j.logs.log_alternate_epoch),
        ),
        (
            "log_alternate_epoch_clock_id",
            "1",
            Some(|j| j.logs.log_epoch_clock_id == 1),
        ),
        (
            "job_start_clock_id",
            "1",
            Some(|j| j.logs.job_start_clock_id == Some(1)),
        ),
        ("log_entries", "4096", Some(|j| j.logs.log_entries == 4096)),
        ("log_entries", "10", None),
        ("per_job_logs", "0", Some(|j| !j.logs.per_job_logs)),
        ("log_offset", "1", Some(|j| j.logs.log_offset)),
        ("log_prio", "1", Some(|j| j.logs.log_prio)),
        ("log_issue_time", "1", Some(|j| j.logs.log_issue_time)),
        (
            "verify",
            "crc32c",
            Some(|j| j.verify.method == VerifyMethod::Crc32c),
        ),
        (
            "verify",
            "crc32c-intel",
            Some(|j| j.verify.method == VerifyMethod::Crc32c),
        ),
        ("verify", "md6", None),
        (
            "verify",
            "meta",
            Some(|j| j.verify.method == VerifyMethod::Meta && j.unsupported.is_empty()),
        ),
        (
            "verify",
            "null",
            Some(|j| j.verify.method == VerifyMethod::Null),
        ),
        ("do_verify", "0", Some(|j| !j.verify.do_verify)),
        ("verify_only", "", Some(|j| j.verify.verify_only)),
        ("verify_strict", "1", Some(|j| j.verify.verify_strict)),
        (
            "verify_write_sequence",
            "0",
            Some(|j| j.verify.verify_write_sequence == Some(false)),
        ),
        (
            "verify_header_seed",
            "1",
            Some(|j| j.verify.verify_header_seed == Some(true)),
        ),
        ("verify_fatal", "1", Some(|j| j.verify.verify_fatal)),
        ("verify_dump", "1", Some(|j| j.verify.verify_dump)),
        ("verify_async", "2", Some(|j| j.verify.verify_async == 2)),
        (
            "experimental_verify",
            "1",
            Some(|j| j.verify.experimental_verify),
        ),
        (
            "trim_percentage",
            "30",
            Some(|j| j.verify.trim_percentage == 30),
        ),
        ("trim_percentage", "101", None),
        (
            "block_error_percentiles",
            "1",
            Some(|j| j.stats.block_error_percentiles),
        ),
        (
            "trim_verify_zero",
            "0",
            Some(|j| !j.verify.trim_verify_zero),
        ),
        ("trim_backlog", "8", Some(|j| j.verify.trim_backlog == 8)),
        (
            "trim_backlog_batch",
            "2",
            Some(|j| j.verify.trim_backlog_batch == 2),
        ),
        (
            "verify_async_cpus",
            "0,2-3",
            Some(|j| j.verify.verify_async_cpus == Some(vec![0, 2, 3])),
        ),
        ("verify_async_cpus", "x", None),
        (
            "verifysort",
            "1",
            Some(|j| j.notes[0].contains("verifysort is deprecated")),
        ),
        (
            "verifysort_nr",
            "8",
            Some(|j| j.notes[0].contains("verifysort_nr is deprecated")),
        ),
        (
            "verify_backlog",
            "1024",
            Some(|j| j.verify.verify_backlog == 1024),
        ),
        (
            "verify_backlog_batch",
            "16",
            Some(|j| j.verify.verify_backlog_batch == 16),
        ),
        (
            "verify_interval",
            "4k",
            Some(|j| j.verify.verify_interval == Some(4096)),
        ),
        ("verify_interval", "1", None),
        (
            "verify_offset",
            "512",
            Some(|j| j.verify.verify_offset == 512),
        ),
        (
            "verify_pattern",
            "0xff",
            Some(|j| {
                j.verify.verify_pattern == vec![0xff] && j.verify.method == VerifyMethod::PatternHdr
            }),
        ),
        (
            "verify_pattern",
            "%o",
            Some(|j| {
                j.unsupported.is_empty()
                    && j.verify.verify_pattern == [0; 8]
                    && j.verify.verify_pattern_offsets == [0]
            }),
        ),
        // fio's own example (HOWTO): 0xff, 8 offset bytes, "abcd", -12 as 4 bytes.
        (
            "verify_pattern",
            "0xff%o\"abcd\"-12",
            Some(|j| {
                j.verify.verify_pattern
                    == [
                        0xff, 0, 0, 0, 0, 0, 0, 0, 0, b'a', b'b', b'c', b'd', 0xf4, 0xff, 0xff,
                        0xff,
                    ]
                    && j.verify.verify_pattern_offsets == [1]
            }),
        ),
        (
            "verify_pattern",
            "%o0xdeadbeef%o",
            Some(|j| {
                j.verify.verify_pattern.len() == 20
                    && j.verify.verify_pattern[8..12] == [0xde, 0xad, 0xbe, 0xef]
                    && j.verify.verify_pattern_offsets == [0, 12]
            }),
        ),
        (
            "verify_pattern",
            "%o%o%o%o%o%o%o%o",
            Some(|j| j.verify.verify_pattern_offsets.len() == 8),
        ),
        ("verify_pattern", "%o%o%o%o%o%o%o%o%o", None),
        ("verify_pattern", "%x", None),
        ("verify_pattern", "%", None),
        ("verify_pattern", "%oabc", None),
        ("verify_pattern", "'/nonexistent/file'", None),
        (
            "verify_pattern",
            "%o'/dev/zero'",
            Some(|j| {
                j.verify.verify_pattern.len() == 512 && j.verify.verify_pattern_offsets == [0]
            }),
        ),
        (
            "verify_pattern",
            "\"%o\"",
            Some(|j| j.verify.verify_pattern == b"%o"),
        ),
        (
            "verify_state_save",
            "0",
            Some(|j| !j.verify.verify_state_save),
        ),
        (
            "verify_state_load",
            "1",
            Some(|j| j.verify.verify_state_load),
        ),
        (
            "serialize_overlap",
            "1",
            Some(|j| j.verify.serialize_overlap),
        ),
    ];

    #[test]
    fn stats_log_verify_options() {
        run(CASES);
    }

    /// verify_pattern turns verification on only when no verify= was written, in any order.
    #[test]
    fn verify_pattern_and_verify_in_either_order() {
        use super::super::testutil::apply_to;
        let method = |opts: &[(&str, &str)]| {
            let mut j = crate::JobSpec::default();
            for (k, v) in opts {
                apply_to(&mut j, k, v).unwrap();
            }
            j.verify.method
        };
        let pat = ("verify_pattern", "0xab");
        assert_eq!(method(&[pat]), VerifyMethod::PatternHdr);
        assert_eq!(method(&[("verify", "0"), pat]), VerifyMethod::None);
        assert_eq!(method(&[pat, ("verify", "0")]), VerifyMethod::None);
        assert_eq!(method(&[("verify", "md5"), pat]), VerifyMethod::Md5);
        assert_eq!(method(&[pat, ("verify", "pattern")]), VerifyMethod::Pattern);
    }
}
