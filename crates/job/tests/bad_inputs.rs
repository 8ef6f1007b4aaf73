//! A corpus of bad job files and command lines, each with the exact message the user sees.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

use fiox_job::jobfile::SubstEnv;
use fiox_job::parse_invocation_with;

fn env() -> SubstEnv {
    SubstEnv {
        vars: [("BS".to_string(), "4k".to_string())].into(),
        pagesize: 4096,
        mb_memory: 1024,
        ncpus: 2,
    }
}

/// Parse `job.fio` with `text` (plus extra args before it) and return the error message.
fn file_err(text: &str) -> String {
    args_err(&["--parse-only", "job.fio"], text)
}

fn args_err(args: &[&str], text: &str) -> String {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let mut read = |p: &str| -> std::io::Result<String> {
        if p == "job.fio" {
            Ok(text.to_string())
        } else {
            Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "No such file or directory",
            ))
        }
    };
    match parse_invocation_with(&args, &env(), &mut read) {
        Ok(inv) => panic!("accepted: {args:?} {text:?} -> {} jobs", inv.jobs.len()),
        Err(e) => e.to_string(),
    }
}

fn cmd_err(line: &str) -> String {
    let mut a = vec!["--parse-only"];
    a.extend(line.split_whitespace());
    args_err(&a, "")
}

const FILE_CASES: &[(&str, &str)] = &[
    // unknown options and typos
    ("[a]\nblocksize_foo=4k\n", "job.fio:2: unknown option 'blocksize_foo' (did you mean 'blocksize_range'?)"),
    ("[a]\niodpeth=4\n", "job.fio:2: unknown option 'iodpeth' (did you mean 'iodepth'?)"),
    ("[a]\nzzzzqqq=1\n", "job.fio:2: unknown option 'zzzzqqq'"),
    ("[global]\nrwmixred=70\n[a]\n", "job.fio:2: unknown option 'rwmixred' (did you mean 'rwmixread'?)"),
    // unknown engines, and fio options/engines fiox parses (then refuses to run) given bad values
    ("[a]\nioengine=libaoi\n", "job.fio:2: ioengine=libaoi: unknown ioengine 'libaoi' (did you mean 'libaio'?)"),
    ("[a]\nioengine=external:/x.so\n", "job.fio:2: ioengine=external:/x.so: ioengine 'external:/x.so': external engines are a fio feature that fiox does not support yet"),
    ("[a]\nioengine=http\nhttp_mode=ftp\n", "job.fio:3: http_mode=ftp: 'ftp' is not one of webdav, s3, swift"),
    ("[a]\nhttp_host=h\n", "job.fio:2: option 'http_host' belongs to ioengine http; this job uses ioengine psync"),
    ("[a]\nioengine=libaio\ncmdprio_percentage=101\n", "job.fio:3: cmdprio_percentage=101: 101 is above the maximum 100"),
    ("[a]\nioengine=libaio\ncmdprio_bssplit=4k/50\ncmdprio_percentage=5\n", "job.fio:4: cmdprio_percentage=5: cmdprio_percentage and cmdprio_bssplit options are mutually exclusive (as in fio); remove one of them"),
    ("[a]\nioengine=io_uring\ncmdprio_bssplit=4k/60:4k/50\n", "job.fio:3: cmdprio_bssplit=4k/60:4k/50: cmdprio_bssplit total percentage for bs: 4096 exceeds 100"),
    ("[a]\nioengine=io_uring\ncmdprio_class=0\n", "job.fio:3: cmdprio_class=0: 0 is below the minimum 1"),
    ("[a]\nlatency_target=10x\n", "job.fio:2: latency_target=10x: bad time suffix 'x' in '10x' (expected us, ms, s, m, h or d)"),
    ("[a]\nflow\n", "job.fio:2: option 'flow' needs a value (flow=...)"),
    ("[a]\nthreads=many\n", "job.fio:2: threads=many: 'many' is not a valid number"),
    ("[a]\nrw=read:-8q\n", "job.fio:2: rw=read:-8q: bad ':N' in 'read:8q': bad size suffix 'q' in '8q' (expected k, m, g, t, p with optional b or ib)"),
    // engine options with the wrong engine
    ("[a]\nfixedbufs\n", "job.fio:2: option 'fixedbufs' belongs to ioengine io_uring/io_uring_cmd; this job uses ioengine psync"),
    ("[a]\nioengine=libaio\nhipri\n", "job.fio:3: option 'hipri' belongs to ioengine pvsync2/io_uring/io_uring_cmd/sg; this job uses ioengine libaio"),
    ("[a]\nuserspace_reap\nioengine=io_uring\n", "job.fio:2: option 'userspace_reap' belongs to ioengine libaio; this job uses ioengine io_uring"),
    ("[a]\nguasi_kick=each\n", "job.fio:2: option 'guasi_kick' belongs to ioengine guasi; this job uses ioengine psync"),
    // sizes
    ("[a]\nbs=q4\n", "job.fio:2: bs=q4: 'q4' is not a valid number"),
    ("[a]\nsize=x10\n", "job.fio:2: size=x10: 'x10' is not a valid number"),
    ("[a]\nsize=-1g\n", "job.fio:2: size=-1g: '-1g' is negative"),
    ("[a]\nbs=0\n", "job.fio:2: bs=0: block size must be at least 1 byte"),
    ("[a]\nbs=1k,2k,3k,4k\n", "job.fio:2: bs=1k,2k,3k,4k: '1k,2k,3k,4k' has 4 comma-separated values; at most 3 (read,write,trim) are allowed"),
    ("[a]\nsize=150%\n", "job.fio:2: size=150%: percentage '150%' is outside 0%..100%"),
    ("[a]\nfilesize=2m-1m\n", "job.fio:2: filesize=2m-1m: range end 1048576 is below its start 2097152"),
    ("[a]\noffset=(4k/0)\n", "job.fio:2: offset=(4k/0): division by zero in '(4k/0)'"),
    // times
    ("[a]\nruntime=10x\n", "job.fio:2: runtime=10x: bad time suffix 'x' in '10x' (expected us, ms, s, m, h or d)"),
    ("[a]\nstartdelay=5-2\n", "job.fio:2: startdelay=5-2: range end 2000000us is below its start 5000000us"),
    // ranges
    ("[a]\nrwmixread=101\n", "job.fio:2: rwmixread=101: 101 is above the maximum 100"),
    ("[a]\nrwmixwrite=-3\n", "job.fio:2: rwmixwrite=-3: -3 is below the minimum 0"),
    ("[a]\niodepth=0\n", "job.fio:2: iodepth=0: 0 is below the minimum 1"),
    ("[a]\nnumjobs=0\n", "job.fio:2: numjobs=0: 0 is below the minimum 1"),
    ("[a]\nnice=20\n", "job.fio:2: nice=20: 20 is above the maximum 19"),
    ("[a]\nprio=9\n", "job.fio:2: prio=9: 9 is above the maximum 7"),
    ("[a]\niodepth=lots\n", "job.fio:2: iodepth=lots: 'lots' is not a valid number"),
    ("[a]\ndirect=2\n", "job.fio:2: direct=2: '2' is not a boolean (use 0 or 1)"),
    // structured values
    ("[a]\nbssplit=4k/60:8k/50\n", "job.fio:2: bssplit=4k/60:8k/50: block size shares add up to 110%, more than 100%"),
    ("[a]\nbssplit=x/10\n", "job.fio:2: bssplit=x/10: 'x' is not a valid number"),
    ("[a]\nrw=randomread\n", "job.fio:2: rw=randomread: 'randomread' is not one of read, write, trim, randread, randwrite, randtrim, rw, readwrite, randrw, trimwrite, randtrimwrite"),
    ("[a]\nrandom_distribution=zipf:1\n", "job.fio:2: random_distribution=zipf:1: zipf theta must be above 0 and not 1 (got 1)"),
    ("[a]\nrandom_distribution=zoned:50/10:40/90\n", "job.fio:2: random_distribution=zoned:50/10:40/90: zone access shares add up to 90%, not 100%"),
    ("[a]\npercentile_list=50:101\n", "job.fio:2: percentile_list=50:101: percentile 101 is outside 0..100"),
    ("[a]\ncpus_allowed=3-1\n", "job.fio:2: cpus_allowed=3-1: CPU range '3-1' is invalid"),
    ("[a]\nignore_error=EWHAT\n", "job.fio:2: ignore_error=EWHAT: 'EWHAT' is not a known error name"),
    ("[a]\nkb_base=1001\n", "job.fio:2: kb_base=1001: '1001' is not one of 1024, 1000"),
    ("[a]\nbuffer_pattern='/nonexistent/p.bin'\n", "job.fio:2: buffer_pattern='/nonexistent/p.bin': cannot open pattern file '/nonexistent/p.bin': No such file or directory (os error 2)"),
    ("[a]\nverify=md6\n", "job.fio:2: verify=md6: 'md6' is not one of 0, none, md5, crc64, crc32c, crc32c-intel, crc32, crc16, crc7, sha1, sha256, sha512, sha3-224, sha3-256, sha3-384, sha3-512, xxhash, pattern, pattern_hdr, null, meta"),
    ("[a]\nbuffer_pattern=\"open\n", "job.fio:2: buffer_pattern=\"open: unterminated \"string\" in pattern"),
    // file structure
    ("bs=4k\n[a]\n", "job.fio:1: option 'bs=4k' is outside of any [section]"),
    ("[a\nbs=4k\n", "job.fio:1: section header '[a' has no closing ']'"),
    ("[]\n", "job.fio:1: empty section name '[]'"),
    ("[a]\n=4k\n", "job.fio:2: '=4k' has no option name before '='"),
    ("[a]\nbs\n", "job.fio:2: option 'bs' needs a value (bs=...)"),
    ("", "job.fio: no jobs defined (a job file needs at least one [job] section)"),
    ("; only a comment\n[global]\nbs=4k\n", "job.fio: no jobs defined (a job file needs at least one [job] section)"),
    ("[a]\nrw=${NOT_SET}\n", "job.fio:2: rw=${NOT_SET}: the value is empty after substitution (is the variable set in the environment?)"),
    ("[a]\nbs=${BS\n", "job.fio:2: bs: unterminated '${' in '${BS'"),
    // job relations
    ("[b]\nwait_for=a\n", "job.fio:2: wait_for=a: no earlier job is named 'a'"),
    ("[a]\n[a]\n[b]\nwait_for=a\n", "job.fio:4: wait_for=a is ambiguous: 2 earlier jobs are named 'a' (in 1 file(s)); rename one"),
    ("[a]\nname=\n", "job.fio:2: name=: a job name cannot be empty"),
    ("[a]\nname=global2\n", "job.fio:2: name=global2: a job name cannot start with 'global' (that name introduces global options)"),
    ("[a]\nnumjobs=70000\n", "job.fio:2: numjobs=70000: 70000 is above the maximum 65536"),
];

/// Jobs that parse (`--parse-only` names what will not run or will fail, and exits 1) but use fio features fiox cannot
/// run yet: the exact lines `--parse-only` prints (a run refuses with the "will not run" ones; it runs the jobs that
/// "will fail", and they fail as fio's do).
const REFUSAL_CASES: &[(&str, &[&str])] = &[
    ("[a]\ngpu_dev_id=1\n", &["job a: `gpu_dev_id` is a fio option that fiox does not support yet (needs a CUDA GPU); this job will not run"]),
    // fio 3.33 loads rbd and libpmem: the job fails when run (its engine's options unused).
    ("[a]\nioengine=rbd\nclientname=admin\n", &[
        "job a: ioengine `rbd` is a fio engine that fiox does not support yet (it needs a Ceph cluster (librbd)); this job will fail when run, as fio 3.33's does here (err=0), and the others will run",
    ]),
    ("[a]\nioengine=libpmem\n", &["job a: ioengine `libpmem` is a fio engine that fiox does not support yet (it needs persistent memory (libpmem)); this job will fail when run, as fio 3.33's does here (err=95), and the others will run"]),
    // ... but fio rejects the file for what it cannot parse (no CUDA in its build).
    ("[a]\nioengine=sg\ngpu_dev_id=1\n", &[
        "job a: `gpu_dev_id` is a fio option that fiox does not support yet (needs a CUDA GPU); this job will not run",
        "job a: ioengine `sg` is a fio engine that fiox does not support yet (it needs a SCSI generic device and SG_IO); this job will fail when run, as fio 3.33's does here (err=22), and the others will run",
    ]),
    // fio 3.33 cannot load http: the file is refused.
    ("[a]\nioengine=http\n", &["job a: ioengine `http` is a fio engine that fiox does not support yet; this job will not run"]),
    // fio ignores them in a job; so does fiox, with a note (see profile_and_threads_run_noted).
    ("[a]\nthreads=1\nprofile=tiobench\n", &[]),
    ("[a]\nzonemode=zbd\n", &["job a: `zonemode=zbd` is a fio option value that fiox does not support yet (zoned block devices); this job will fail when run (err=22, as fio 3.33's on a file smaller than a zone), and the others will run"]),
    // The zones' own options go with zonemode=zbd; without it they are refused.
    ("[a]\nzonemode=zbd\nmax_open_zones=4\nread_beyond_wp=1\n", &["job a: `zonemode=zbd` is a fio option value that fiox does not support yet (zoned block devices); this job will fail when run (err=22, as fio 3.33's on a file smaller than a zone), and the others will run"]),
    ("[a]\nmax_open_zones=4\n", &["job a: `max_open_zones` is a fio option that fiox does not support yet (zoned block devices); this job will not run"]),
    ("[a]\nrw=randread:-8\nrw=read:-8k\noffset_increment=10%\natomic=1\nwrite_barrier=2\n", &[]),
    // numjobs clones are named once; the later value of an option replaces the earlier one.
    ("[global]\ngpu_dev_id=0\n[a]\nnumjobs=3\ngpu_dev_id=1\n[b]\n", &[
        "job a: `gpu_dev_id` is a fio option that fiox does not support yet (needs a CUDA GPU); this job will not run",
        "job b: `gpu_dev_id` is a fio option that fiox does not support yet (needs a CUDA GPU); this job will not run",
    ]),
    // fio 3.42's values that run now.
    ("[a]\nverify=pattern_hdr\nverify_pattern=0xab\nfadvise_hint=noreuse\n", &[]),
    // a supported value later on clears the record
    ("[global]\nioengine=http\n[a]\nioengine=libaio\nverify=meta\nverify=md5\n", &[]),
];

#[test]
fn refused_jobs_parse_and_say_why() {
    for (text, want) in REFUSAL_CASES {
        let args: Vec<String> = ["--parse-only", "job.fio"].map(String::from).to_vec();
        let mut read = |_: &str| Ok(text.to_string());
        let inv = parse_invocation_with(&args, &env(), &mut read)
            .unwrap_or_else(|e| panic!("input {text:?}: {e}"));
        assert_eq!(
            [inv.refusals(), inv.failing()].concat(),
            *want,
            "input: {text:?}"
        );
    }
}

#[test]
fn bad_job_files() {
    for (text, want) in FILE_CASES {
        assert_eq!(&file_err(text), want, "input: {text:?}");
    }
}

const CMD_CASES: &[(&str, &str)] = &[
    ("--name=a --bs=q4", "command line: bs=q4: 'q4' is not a valid number"),
    ("--name=a --blocksize_foo=4k", "command line: unknown option 'blocksize_foo' (did you mean 'blocksize_range'?)"),
    ("--name=a --rwmixread=120", "command line: rwmixread=120: 120 is above the maximum 100"),
    ("--name=a --iodepth", "command line: option '--iodepth' needs a value (--iodepth=...)"),
    ("--name", "command line: option '--name' needs a value (--name=...)"),
    ("--name= --bs=4k", "command line: --name needs a job name"),
    ("--name=a --output-format=xml", "command line: --output-format: unknown format 'xml' (use normal, json, json+ or terse)"),
    ("--name=a --eta=sometimes", "command line: --eta=sometimes: use auto, always or never"),
    ("--name=a --status-interval=5q", "command line: --status-interval: bad time suffix 'q' in '5q' (expected us, ms, s, m, h or d)"),
    ("--name=a --parse-onyl", "command line: unknown switch '--parse-onyl' (did you mean '--parse-only'?)"),
    ("--debug=io2 --name=a", "command line: --debug: unknown category 'io2' (use process, file, io, mem, blktrace, verify, random, parse, diskutil, job, mutex, profile, time, net, rate, compress, steadystate, helperthread, zbd, all)"),
    ("--latency-log=1 --name=a", "command line: switch '--latency-log' takes no value"),
    ("--name=a -y", "command line: unknown switch '-y' (options are written --name=value or -name=value)"),
    ("--name=a -x", "command line: option '--section' needs a value (--section=...)"),
    ("--name=a --max-jobs=0", "command line: --max-jobs=0: not a positive number"),
    ("--cmdhelp=iodpeth", "command line: unknown option 'iodpeth' (did you mean 'iodepth'?)"),
    ("--enghelp=http,http_hots", "command line: ioengine http has no option 'http_hots' (did you mean 'http_host'?)"),
    ("--enghelp=ceph", "command line: unknown ioengine 'ceph'"),
    ("--name=a --ioengine=io_uring --userspace_reap", "command line: option 'userspace_reap' belongs to ioengine libaio; this job uses ioengine io_uring"),
    ("missing.fio", "cannot read job file 'missing.fio': No such file or directory"),
];

#[test]
fn bad_command_lines() {
    for (line, want) in CMD_CASES {
        assert_eq!(&cmd_err(line), want, "input: {line}");
    }
}

/// A scratch directory removed on drop.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let p = std::env::temp_dir().join(format!("fiox-job-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    fn write(&self, name: &str, text: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn real_file_err(path: &str) -> String {
    let args = vec!["--parse-only".to_string(), path.to_string()];
    let mut read = |p: &str| std::fs::read_to_string(p);
    parse_invocation_with(&args, &env(), &mut read)
        .map(|i| format!("accepted {} jobs", i.jobs.len()))
        .unwrap_or_else(|e| e.to_string())
}

#[test]
fn include_errors() {
    let d = TempDir::new("inc");
    let top = d.write("top.fio", "[a]\ninclude loop1.inc\n");
    let l1 = d.write("loop1.inc", "bs=4k\ninclude loop2.inc\n");
    let l2 = d.write("loop2.inc", "include loop1.inc\n");
    assert_eq!(
        real_file_err(&top),
        format!("{l2}:1: include loop: 'loop1.inc' includes itself (directly or indirectly)")
    );
    let _ = l1;
    let selfinc = d.write("self.fio", "[a]\ninclude self.fio\n");
    assert_eq!(
        real_file_err(&selfinc),
        format!("{selfinc}:2: include loop: 'self.fio' includes itself (directly or indirectly)")
    );
    let missing = d.write("missing.fio", "[a]\ninclude nothere.inc\n");
    assert_eq!(
        real_file_err(&missing),
        format!("{missing}:2: cannot include 'nothere.inc': no such file")
    );
    let sect = d.write("sect.fio", "[a]\ninclude withsect.inc\n");
    let ws = d.write("withsect.inc", "bs=4k\n[b]\n");
    assert_eq!(
        real_file_err(&sect),
        format!("{ws}:2: an included file cannot start new [sections]")
    );
    let bad = d.write("bad.fio", "[a]\ninclude badopt.inc\n");
    let bo = d.write("badopt.inc", "; comment\niodpeth=2\n");
    assert_eq!(
        real_file_err(&bad),
        format!("{bo}:2: unknown option 'iodpeth' (did you mean 'iodepth'?)")
    );
}

#[test]
fn corpus_is_large_enough() {
    assert!(FILE_CASES.len() + CMD_CASES.len() + 5 >= 40);
}

/// `profile=` and `threads=` in a job: fio 3.33 stores them and runs the job as written;
/// fiox runs it too (they used to refuse the job), saying in a note that they do nothing.
#[test]
fn profile_and_threads_run_noted() {
    let text = "[a]\nprofile=tiobench\nthreads=4\nsize=1m\n";
    let args: Vec<String> = ["--parse-only", "job.fio"].map(String::from).to_vec();
    let mut read = |_: &str| Ok(text.to_string());
    let inv = parse_invocation_with(&args, &env(), &mut read).unwrap();
    assert!(inv.refusals().is_empty(), "{:?}", inv.refusals());
    let notes = inv.notes();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes[0].starts_with("job a: profile=tiobench has no effect"),
        "{notes:?}"
    );
    assert!(
        notes[1].starts_with("job a: threads=4 has no effect"),
        "{notes:?}"
    );
    assert_eq!(inv.jobs.len(), 1);
}
