//! Shared test harness: temp files on a disk filesystem (/tmp or /var/tmp) and on tmpfs
//! (/dev/shm), and a small queue/commit/getevents driver that behaves like the runner.

#![allow(dead_code)]

/// The workspace's test harness for what a test needs from the machine (tests/harness/need.rs).
#[path = "../../../../tests/harness/need.rs"]
pub mod need;
#[allow(unused_imports)] // each test binary uses part of them
pub use need::{kernel_filesystem, kernel_io_uring, skip_for_kernel};

use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use fiox_engine::{
    create, open_file, sys, BufPool, BufSpan, Completion, EngineError, EngineFile, IoEngine, IoOp,
    IoUnit, OpenSpec, Queued,
};
use fiox_job::spec::{EngineOptions, JobSpec, RwMode, SyncMode};

pub const EXT4_MAGIC: i64 = 0xEF53;
pub const TMPFS_MAGIC: i64 = 0x0102_1994;
pub const FILE_SIZE: u64 = 1 << 20;

/// A temp directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new_in(parent: &str, tag: &str) -> Option<TempDir> {
        let base = Path::new(parent);
        if !base.is_dir() {
            return None;
        }
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let d = base.join(format!("fiox-engine-{tag}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&d).ok()?;
        Some(TempDir(d))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A directory on a filesystem that supports O_DIRECT (ext4/xfs/btrfs...), if any.
pub fn disk_dir(tag: &str) -> Option<TempDir> {
    for p in ["/var/tmp", "/tmp"] {
        if let Ok(m) = sys::fs_magic(Path::new(p)) {
            if m != TMPFS_MAGIC {
                if let Some(d) = TempDir::new_in(p, tag) {
                    return Some(d);
                }
            }
        }
    }
    None
}

/// A directory on the tmpfs at /dev/shm: None (the skip recorded) when the kernel has no tmpfs;
/// the test fails when /dev/shm is not one (the suite needs it, as on every Debian machine).
pub fn need_shm(tag: &str) -> Option<TempDir> {
    if !kernel_filesystem("tmpfs") {
        return None;
    }
    let dir = shm_dir(tag);
    assert!(
        dir.is_some(),
        "/dev/shm is not a tmpfs here: `mount -t tmpfs tmpfs /dev/shm` (the tests use it)"
    );
    dir
}

/// A directory on a disk filesystem (/var/tmp or /tmp not on tmpfs): the test fails without.
pub fn need_disk(tag: &str) -> TempDir {
    disk_dir(tag).expect("neither /var/tmp nor /tmp is on a disk filesystem (ext4, xfs...)")
}

pub fn shm_dir(tag: &str) -> Option<TempDir> {
    match sys::fs_magic(Path::new("/dev/shm")) {
        Ok(m) if m == TMPFS_MAGIC => TempDir::new_in("/dev/shm", tag),
        _ => None,
    }
}

/// Every job this test binary builds uses io_submit_mode=offload (set by tests/offload.rs,
/// whose tests all run the batteries through the offload adapter; other binaries never set it).
#[allow(dead_code)]
pub static OFFLOAD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub fn job(engine: &str, iodepth: u32, direct: bool, opts: EngineOptions) -> JobSpec {
    let mut j = JobSpec {
        io_submit_mode: if OFFLOAD.load(std::sync::atomic::Ordering::Relaxed) {
            fiox_job::spec::IoSubmitMode::Offload
        } else {
            fiox_job::spec::IoSubmitMode::Inline
        },
        ioengine: engine.into(),
        iodepth,
        direct,
        engine: EngineOptions {
            hipri_percentage: 100,
            ..opts
        },
        ..JobSpec::default()
    };
    j.rw.mode = RwMode::RandRw;
    j
}

/// Create a zero-filled FILE_SIZE file and open it for the job.
pub fn open_test_file(dir: &Path, job: &JobSpec) -> Result<(std::fs::File, PathBuf), EngineError> {
    let path = dir.join("data");
    std::fs::write(&path, vec![0u8; FILE_SIZE as usize]).unwrap();
    let spec = OpenSpec {
        write: true,
        create: false,
        direct: job.direct,
        atomic: false,
        sync: SyncMode::None,
    };
    let f = open_file(&path, &spec)?;
    Ok((f, path))
}

pub fn engine_file(f: &std::fs::File, path: &Path) -> EngineFile {
    EngineFile {
        fd: f.as_raw_fd(),
        path: path.to_path_buf(),
        size: FILE_SIZE,
        writable: true,
    }
}

/// A unit of `len` bytes at `offset`: a read or write moves the first `len` bytes of `buf`
/// (a pool slot), another operation covers `len` bytes and moves none.
pub fn unit(op: IoOp, offset: u64, len: u32, buf: BufSpan) -> IoUnit {
    match op {
        IoOp::Read | IoOp::Write => {
            let span = buf.prefix(len).expect("the unit's length fits its slot");
            IoUnit::transfer(op, 0, offset, span)
        }
        _ => IoUnit::range(op, 0, offset, len),
    }
}

/// Drive units through the engine like the runner: at most `depth` in flight, Busy -> commit and
/// reap, then retry. Returns each unit's result in order.
pub fn run(e: &mut dyn IoEngine, depth: usize, units: &[IoUnit]) -> Vec<i64> {
    let mut res = vec![i64::MIN; units.len()];
    let mut inflight = 0usize;
    let mut events: Vec<Completion> = Vec::new();
    let mut i = 0;
    let mut spins = 0u64;
    while i < units.len() || inflight > 0 {
        spins += 1;
        assert!(spins < 10_000_000, "engine {} makes no progress", e.name());
        if i < units.len() && inflight < depth {
            match e.queue(i as u32, &units[i]).unwrap() {
                Queued::Done(r) => {
                    res[i] = r;
                    i += 1;
                    continue;
                }
                Queued::Queued => {
                    inflight += 1;
                    i += 1;
                    if i < units.len() && inflight < depth {
                        continue;
                    }
                }
                Queued::Busy => assert!(inflight > 0, "Busy with nothing in flight"),
            }
        }
        e.commit().unwrap();
        events.clear();
        let n = e.getevents(1, depth, &mut events).unwrap();
        assert_eq!(n, events.len());
        for c in &events {
            assert_eq!(
                res[c.unit as usize],
                i64::MIN,
                "unit {} completed twice",
                c.unit
            );
            res[c.unit as usize] = c.result;
            inflight -= 1;
        }
    }
    res
}

fn pattern(slot: usize, len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 + slot * 7 + 1) as u8).collect()
}

/// Offsets: a contiguous run (vsync merges it), scattered blocks, and the last block.
pub const OFFSETS: [u64; 6] = [0, 4096, 8192, 65536, 12288 * 7, FILE_SIZE - 4096];

/// Write a pattern at OFFSETS, fsync, read it back into other slots and compare.
pub fn roundtrip(name: &str, depth: u32, direct: bool, opts: EngineOptions, dir: &Path) {
    let j = job(name, depth, direct, opts);
    let mut e = create(&j).unwrap();
    let (f, path) = open_test_file(dir, &j).unwrap();
    e.add_file(&engine_file(&f, &path)).unwrap();
    let n = OFFSETS.len();
    let mut pool = BufPool::new(2 * n, 4096, 4096).unwrap();
    for s in 0..n {
        pool.slice_mut(s).copy_from_slice(&pattern(s, 4096));
    }
    e.register_buffers(&pool).unwrap();
    let writes: Vec<IoUnit> = (0..n)
        .map(|s| unit(IoOp::Write, OFFSETS[s], 4096, pool.slot(s)))
        .collect();
    let r = run(e.as_mut(), depth as usize, &writes);
    assert!(r.iter().all(|&x| x == 4096), "{name} writes: {r:?}");
    let r = run(e.as_mut(), 1, &[unit(IoOp::Fsync, 0, 0, BufSpan::empty())]);
    assert_eq!(r, vec![0], "{name} fsync");
    let r = run(
        e.as_mut(),
        1,
        &[unit(IoOp::Fdatasync, 0, 0, BufSpan::empty())],
    );
    assert_eq!(r, vec![0], "{name} fdatasync");
    let reads: Vec<IoUnit> = (0..n)
        .map(|s| unit(IoOp::Read, OFFSETS[s], 4096, pool.slot(n + s)))
        .collect();
    let r = run(e.as_mut(), depth as usize, &reads);
    assert!(r.iter().all(|&x| x == 4096), "{name} reads: {r:?}");
    for (s, off) in OFFSETS.iter().enumerate() {
        assert!(
            pool.slice(n + s) == pattern(s, 4096).as_slice(),
            "{name}: data at {off}"
        );
    }
    drop(e);
    // The data really is in the file, not just in the engine.
    let content = std::fs::read(&path).unwrap();
    for (s, &off) in OFFSETS.iter().enumerate() {
        let o = off as usize;
        assert!(
            content[o..o + 4096] == pattern(s, 4096)[..],
            "{name}: file at {o}"
        );
    }
}

/// End-of-file behaviour: a read crossing EOF is short, a read at EOF returns 0.
pub fn eof_reads(name: &str, depth: u32, direct: bool, opts: EngineOptions, dir: &Path) {
    let j = job(name, depth, direct, opts);
    let mut e = create(&j).unwrap();
    let (f, path) = open_test_file(dir, &j).unwrap();
    e.add_file(&engine_file(&f, &path)).unwrap();
    let pool = BufPool::new(2, 8192, 4096).unwrap();
    e.register_buffers(&pool).unwrap();
    let r = run(
        e.as_mut(),
        1,
        &[unit(IoOp::Read, FILE_SIZE - 4096, 8192, pool.slot(0))],
    );
    assert_eq!(r, vec![4096], "{name}: read crossing EOF");
    let r = run(
        e.as_mut(),
        1,
        &[unit(IoOp::Read, FILE_SIZE, 4096, pool.slot(1))],
    );
    assert_eq!(r, vec![0], "{name}: read at EOF");
}

/// A misaligned O_DIRECT read completes with -EINVAL (not a panic or an engine error).
pub fn misaligned_direct(name: &str, depth: u32, opts: EngineOptions, dir: &Path) {
    let j = job(name, depth, true, opts);
    let mut e = create(&j).unwrap();
    let (f, path) = open_test_file(dir, &j).unwrap();
    e.add_file(&engine_file(&f, &path)).unwrap();
    let pool = BufPool::new(1, 8192, 4096).unwrap();
    e.register_buffers(&pool).unwrap();
    let r = run(e.as_mut(), 1, &[unit(IoOp::Read, 1, 4096, pool.slot(0))]);
    assert_eq!(
        r,
        vec![-(libc::EINVAL as i64)],
        "{name}: misaligned O_DIRECT"
    );
    assert_eq!(fiox_engine::errno_name(-r[0] as i32), "EINVAL");
}

/// O_DIRECT on tmpfs: either the clear DirectUnsupported error (older kernels) or, since
/// Linux 6.6 where tmpfs accepts O_DIRECT, a working round trip.
pub fn shm_direct(name: &str, depth: u32, opts: EngineOptions) {
    let Some(dir) = need_shm(name) else {
        return;
    };
    let j = job(name, depth, true, opts.clone());
    match open_test_file(&dir.0, &j) {
        Err(EngineError::DirectUnsupported(p)) => {
            let msg = EngineError::DirectUnsupported(p).to_string();
            assert!(
                msg.contains("direct=1 is not supported by the filesystem of"),
                "{msg}"
            );
        }
        Err(e) => panic!("{name}: unexpected open error {e}"),
        Ok(_) => roundtrip(name, depth, true, opts, &dir.0),
    }
}

/// A trim of a regular file fails with ENOTTY, as fio 3.33's (every engine but falloc discards
/// with BLKDISCARD, which only a block device takes), and the data stays.
pub fn trim_of_a_file_fails_with_enotty(name: &str, depth: u32, opts: EngineOptions, dir: &Path) {
    let j = job(name, depth, false, opts);
    let mut e = create(&j).unwrap();
    let (f, path) = open_test_file(dir, &j).unwrap();
    e.add_file(&engine_file(&f, &path)).unwrap();
    let mut pool = BufPool::new(2, 4096, 4096).unwrap();
    pool.slice_mut(0).fill(0xAB);
    e.register_buffers(&pool).unwrap();
    let r = run(
        e.as_mut(),
        1,
        &[unit(IoOp::Write, 8192, 4096, pool.slot(0))],
    );
    assert_eq!(r, vec![4096]);
    let r = run(e.as_mut(), 1, &[unit(IoOp::Trim, 8192, 4096, pool.slot(0))]);
    assert_eq!(
        r,
        vec![-(libc::ENOTTY as i64)],
        "{name}: trim of a regular file"
    );
    pool.slice_mut(1).fill(0xFF);
    let r = run(e.as_mut(), 1, &[unit(IoOp::Read, 8192, 4096, pool.slot(1))]);
    assert_eq!(r, vec![4096]);
    assert!(
        pool.slice(1).iter().all(|&b| b == 0xAB),
        "{name}: the data stays"
    );
}

/// The standard battery for a data-moving engine.
pub fn battery(name: &str, depth: u32, opts: EngineOptions) {
    battery_with(name, depth, opts, true)
}

/// `honours_direct`: false for engines that bypass O_DIRECT semantics (mmap).
pub fn battery_with(name: &str, depth: u32, opts: EngineOptions, honours_direct: bool) {
    let dir = need_disk(name);
    roundtrip(name, depth, false, opts.clone(), &dir.0);
    eof_reads(name, depth, false, opts.clone(), &dir.0);
    trim_of_a_file_fails_with_enotty(name, depth, opts.clone(), &dir.0);
    if let Some(shm) = need_shm(name) {
        roundtrip(name, depth, false, opts.clone(), &shm.0);
    }
    let probe = job(name, depth, true, opts.clone());
    match open_test_file(&dir.0, &probe) {
        Err(EngineError::DirectUnsupported(_)) => skip_for_kernel(
            &format!("O_DIRECT on the filesystem of {}", dir.0.display()),
            "open(O_DIRECT) refused (EINVAL)",
        ),
        Err(e) => panic!("{e}"),
        Ok(_) => {
            roundtrip(name, depth, true, opts.clone(), &dir.0);
            eof_reads(name, depth, true, opts.clone(), &dir.0);
            if honours_direct {
                misaligned_direct(name, depth, opts.clone(), &dir.0);
            }
        }
    }
    shm_direct(name, depth, opts);
}
