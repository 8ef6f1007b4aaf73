//! The store as a user meets it: import round trip, queries, refusals that leave the file as
//! it was, two writer processes at once, and a writer killed mid-way. Child processes are this
//! very test binary, run with FIOX_HISTORY_CHILD set (see `child_writer`).

#![allow(clippy::disallowed_methods)] // tests build their own scratch directories and files

use fiox_history::query::{Filter, Gc};
use fiox_history::{import, regress, HistoryError, Record, Source, Store};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "support/pg.rs"]
mod pg;

/// The tests every backend must pass: `NAME(db, scratch)` runs as `sqlite::NAME` on a file in
/// a private scratch directory and as `postgresql::NAME` on a real PostgreSQL server of its own
/// (skipped, saying why, where PostgreSQL is not installed).
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[test]
            fn $name() {
                let s = super::Scratch::new(concat!("sqlite-", stringify!($name)));
                super::$name(&s.db(), &s);
            })*
        }
        mod postgresql {
            $(#[test]
            fn $name() {
                let Some(server) = super::pg::Server::start(stringify!($name)) else {
                    return;
                };
                let s = super::Scratch::new(concat!("pg-", stringify!($name)));
                super::$name(&server.url(), &s);
            })*
        }
    };
}

on_both_backends!(
    a_fio_3_33_result_round_trips_through_import,
    an_experiment_directory_imports_its_finished_measured_runs,
    filters_trend_tags_and_gc,
    a_ten_percent_step_at_a_kernel_is_flagged_there,
    two_writer_processes_at_once_lose_nothing,
);

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/fio-3.33-randrw-libaio.json"
);

/// A private scratch directory (mode 0700), removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let p = std::env::temp_dir().join(format!("fiox-history-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().mode(0o700).create(&p).unwrap();
        Scratch(p)
    }
    fn db(&self) -> PathBuf {
        self.0.join("history.db")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A small fiox-shaped result: one job, read only.
fn result(job: &str, iops: f64, kernel: &str, ts: i64, salt: u64) -> String {
    json!({
        "fio version": "fiox-test",
        "timestamp": ts,
        "jobs": [{
            "jobname": job,
            "job options": {"filename": "/dev/fiox-test"},
            "read": {
                "total_ios": 1000, "iops": iops, "bw": iops * 4.0,
                "lat_ns": {"mean": 1e9 / iops},
                "clat_ns": {"percentile": {"50.000000": 1e9 / iops, "99.000000": 2e9 / iops}}
            },
            "write": {"total_ios": 0}
        }],
        "fiox": {
            "env": {"hostname": "testhost", "kernel": {"release": kernel}, "fiox": {"commit": "c1"}},
            "salt": salt
        }
    })
    .to_string()
}

fn record(text: String) -> Record {
    Record::from_json(Source::Run, text, "test").unwrap()
}

fn a_fio_3_33_result_round_trips_through_import(db: &Path, _s: &Scratch) {
    let mut store = Store::open(db).unwrap();
    let o = import::Options {
        host: Some("boxA".into()),
        tags: vec!["baseline".into()],
        ..Default::default()
    };
    let r = import::import(&mut store, &[PathBuf::from(FIXTURE)], &o).unwrap();
    assert_eq!(r.added.len(), 1);
    let id = r.added[0];
    let d = store.show(id).unwrap().unwrap();
    let text = std::fs::read_to_string(FIXTURE).unwrap();
    // The JSON as produced, byte for byte.
    assert_eq!(d.result, text);
    assert_eq!(d.tool.as_deref(), Some("fio-3.33"));
    assert_eq!(d.summary.host.as_deref(), Some("boxA"));
    assert_eq!(d.summary.targets, "/mnt/test/file");
    assert_eq!(d.summary.tags, vec!["baseline"]);
    assert_eq!(d.summary.run_at, 1795323896);
    // The metrics are those fiox compare reads from the same file.
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let run = fiox_experiment::load::run_from_value(Path::new(FIXTURE), &doc);
    let want: Vec<(String, String, f64)> = run.jobs["sample"]
        .iter()
        .map(|(k, v)| ("sample".to_string(), k.clone(), *v))
        .collect();
    assert_eq!(d.metrics, want);
    assert!(d
        .metrics
        .iter()
        .any(|(_, m, v)| m == "read.iops" && (*v - 28238.380810).abs() < 1e-6));
    // The same file again: recognised, not added.
    let again = import::import(&mut store, &[PathBuf::from(FIXTURE)], &o).unwrap();
    assert_eq!((again.added.len(), again.known), (0, vec![id]));
    assert_eq!(store.count().unwrap(), 1);
}

fn an_experiment_directory_imports_its_finished_measured_runs(db: &Path, s: &Scratch) {
    let dir = s.0.join("exp-results");
    std::fs::create_dir(&dir).unwrap();
    for (f, v) in [("a-1.json", 1.0), ("b-1.json", 2.0), ("a-w.json", 3.0)] {
        std::fs::write(dir.join(f), result("j", 100.0 * v, "6.1", 1000, v as u64)).unwrap();
    }
    let manifest = json!({"name": "sched", "variants": ["a", "b"], "runs": [
        {"variant": "a", "file": "a-1.json", "status": "done", "warmup": false},
        {"variant": "b", "file": "b-1.json", "status": "done", "warmup": false},
        {"variant": "a", "file": "a-w.json", "status": "done", "warmup": true},
    ]});
    std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
    let mut store = Store::open(db).unwrap();
    let r = import::import(&mut store, &[dir], &import::Options::default()).unwrap();
    assert_eq!(r.added.len(), 2);
    let list = store.list(&Filter::default(), 0).unwrap();
    let mut vs: Vec<_> = list
        .iter()
        .map(|r| (r.experiment.clone().unwrap(), r.variant.clone().unwrap()))
        .collect();
    vs.sort();
    assert_eq!(
        vs,
        [("sched".into(), "a".into()), ("sched".into(), "b".into())]
    );
}

fn filters_trend_tags_and_gc(db: &Path, _s: &Scratch) {
    let mut store = Store::open(db).unwrap();
    for i in 0..10 {
        let k = if i < 5 { "6.1" } else { "6.2" };
        let job = if i % 2 == 0 { "even" } else { "odd" };
        store
            .insert(&record(result(
                job,
                1000.0 + i as f64,
                k,
                1_000_000 + i * 60,
                i as u64,
            )))
            .unwrap();
    }
    fn ids(store: &Store, f: Filter) -> Vec<i64> {
        store.list(&f, 0).unwrap().iter().map(|r| r.id).collect()
    }
    assert_eq!(
        ids(
            &store,
            Filter {
                kernel: Some("6.2".into()),
                ..Filter::default()
            }
        ),
        [10, 9, 8, 7, 6]
    );
    assert_eq!(
        ids(
            &store,
            Filter {
                job: Some("odd".into()),
                kernel: Some("6.1".into()),
                ..Filter::default()
            }
        ),
        [4, 2]
    );
    assert_eq!(
        ids(
            &store,
            Filter {
                since: Some(1_000_000 + 8 * 60),
                ..Filter::default()
            }
        ),
        [10, 9]
    );
    assert_eq!(
        ids(
            &store,
            Filter {
                target: Some("/dev/fiox-test".into()),
                ..Filter::default()
            }
        )
        .len(),
        10
    );
    assert_eq!(
        ids(&store, Filter::parse_selector("3..5").unwrap()),
        [5, 4, 3]
    );
    assert_eq!(store.list(&Filter::default(), 3).unwrap().len(), 3);
    let t = store
        .points(
            "iops",
            &Filter {
                job: Some("even".into()),
                ..Filter::default()
            },
        )
        .unwrap();
    assert_eq!(
        t.iter().map(|p| p.value).collect::<Vec<_>>(),
        [1000.0, 1002.0, 1004.0, 1006.0, 1008.0]
    );
    assert!(t.iter().all(|p| p.metric == "read.iops"));
    assert!(store.tag(2, "keep", false).unwrap());
    assert_eq!(
        ids(
            &store,
            Filter {
                tag: Some("keep".into()),
                ..Filter::default()
            }
        ),
        [2]
    );
    assert!(matches!(
        store.tag(99, "x", false),
        Err(HistoryError::Input { .. })
    ));
    // gc keeps the 3 newest and the tagged run.
    let g = Gc {
        keep: Some(3),
        ..Gc::default()
    };
    assert_eq!(
        store
            .gc(&Gc {
                dry_run: true,
                ..g.clone()
            })
            .unwrap(),
        6
    );
    assert_eq!(store.count().unwrap(), 10);
    assert_eq!(store.gc(&g).unwrap(), 6);
    assert_eq!(ids(&store, Filter::default()), [10, 9, 8, 2]);
    // Their metrics went with them.
    assert_eq!(store.points("iops", &Filter::default()).unwrap().len(), 4);
    // --older-than: runs before the time go, tagged ones only with --tagged.
    let old = Gc {
        before: Some(1_000_000 + 9 * 60),
        ..Gc::default()
    };
    assert_eq!(store.gc(&old).unwrap(), 2);
    assert_eq!(ids(&store, Filter::default()), [10, 2]);
    assert_eq!(
        store
            .gc(&Gc {
                tagged: true,
                ..old
            })
            .unwrap(),
        1
    );
    assert_eq!(ids(&store, Filter::default()), [10]);
}

fn a_ten_percent_step_at_a_kernel_is_flagged_there(db: &Path, _s: &Scratch) {
    let mut store = Store::open(db).unwrap();
    // 6 kernels x 6 runs, noise +-2%, IOPS 10% lower from 6.4 on.
    let mut x: u64 = 12345;
    for k in 0..6 {
        for r in 0..6 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let noise = ((x >> 33) as f64 / (1u64 << 31) as f64 - 0.5) * 0.04;
            let level = if k >= 4 { 900.0 } else { 1000.0 };
            let i = k * 6 + r;
            let text = result(
                "rr",
                level * (1.0 + noise),
                &format!("6.{k}"),
                1_000_000 + i * 600,
                i as u64,
            );
            store.insert(&record(text)).unwrap();
        }
    }
    let found = regress::detect(
        store.points("iops", &Filter::default()).unwrap(),
        &regress::Options::default(),
    );
    assert_eq!(found.len(), 1, "{found:?}");
    let f = &found[0];
    assert_eq!(f.after[0].kernel.as_deref(), Some("6.4"));
    assert_eq!(f.before.last().unwrap().kernel.as_deref(), Some("6.3"));
    assert_eq!(f.worse, Some(true));
    assert!((f.split.change + 0.1).abs() < 0.03, "{:?}", f.split);
    // Latency moved the other way, also for the worse.
    let lat = regress::detect(
        store.points("lat_mean_us", &Filter::default()).unwrap(),
        &regress::Options::default(),
    );
    assert_eq!(lat.len(), 1);
    assert_eq!(lat[0].worse, Some(true));
}

/// The bytes of `p` (and whether its -wal exists), to show a refused file was left alone.
fn snapshot(p: &Path) -> (Vec<u8>, bool) {
    let mut wal = p.as_os_str().to_owned();
    wal.push("-wal");
    (std::fs::read(p).unwrap(), Path::new(&wal).exists())
}

fn refusal(p: &Path) -> String {
    match Store::open(p) {
        Err(e @ HistoryError::Refused { .. }) => e.to_string(),
        Err(e) => panic!("not a refusal: {e}"),
        Ok(_) => panic!("opened {}", p.display()),
    }
}

#[test]
fn a_corrupt_file_is_refused_and_left_as_it_is() {
    let s = Scratch::new("corrupt");
    let junk: Vec<u8> = (0..8192u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(s.db(), &junk).unwrap();
    let before = snapshot(&s.db());
    let e = refusal(&s.db());
    assert!(e.contains("not an SQLite database"), "{e}");
    assert_eq!(snapshot(&s.db()), before);
    assert!(!before.1);
}

#[test]
fn a_database_with_corrupt_pages_is_refused_and_left_as_it_is() {
    let s = Scratch::new("pages");
    {
        let mut store = Store::open(&s.db()).unwrap();
        for i in 0..200 {
            store
                .insert(&record(result(
                    "j",
                    100.0 + i as f64,
                    "6.1",
                    1000 + i,
                    i as u64,
                )))
                .unwrap();
        }
    }
    // Everything in the main file (no WAL left), then pages after the first overwritten.
    let mut bytes = std::fs::read(s.db()).unwrap();
    assert!(bytes.len() > 16384);
    for b in &mut bytes[4096..] {
        *b = 0xa5;
    }
    std::fs::write(s.db(), &bytes).unwrap();
    let before = std::fs::read(s.db()).unwrap();
    let e = match Store::open(&s.db()).and_then(|st| st.list(&Filter::default(), 0).map(|_| ())) {
        Err(e @ HistoryError::Refused { .. }) => e.to_string(),
        other => panic!("not refused: {other:?}"),
    };
    assert!(e.contains("corrupt"), "{e}");
    assert_eq!(std::fs::read(s.db()).unwrap(), before);
}

#[test]
fn a_newer_schema_is_refused_and_left_as_it_is() {
    let s = Scratch::new("newer");
    drop(Store::open(&s.db()).unwrap());
    {
        let c = rusqlite::Connection::open(s.db()).unwrap();
        c.execute_batch("PRAGMA user_version = 99").unwrap();
    }
    let before = std::fs::read(s.db()).unwrap();
    let e = refusal(&s.db());
    assert!(e.contains("newer fiox (schema version 99"), "{e}");
    assert_eq!(std::fs::read(s.db()).unwrap(), before);
}

#[test]
fn another_programs_database_is_refused() {
    let s = Scratch::new("foreign");
    {
        let c = rusqlite::Connection::open(s.db()).unwrap();
        c.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .unwrap();
    }
    let before = std::fs::read(s.db()).unwrap();
    assert!(refusal(&s.db()).contains("not a fiox history"));
    assert_eq!(std::fs::read(s.db()).unwrap(), before);
}

#[test]
fn links_and_shared_directories_are_refused() {
    let s = Scratch::new("links");
    std::fs::write(s.0.join("target"), b"").unwrap();
    std::os::unix::fs::symlink(s.0.join("target"), s.db()).unwrap();
    assert!(refusal(&s.db()).contains("not a regular file"));
    let shared = s.0.join("shared");
    std::fs::create_dir(&shared).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    assert!(refusal(&shared.join("h.db")).contains("writable by other users"));
    assert!(!shared.join("h.db").exists());
    // A directory another user owns (as root: a nobody's directory).
    if std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
        .unwrap()
        == 0
    {
        let theirs = s.0.join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        assert!(refusal(&theirs.join("h.db")).contains("belongs to uid 65534"));
        assert!(!theirs.join("h.db").exists());
    }
}

#[test]
fn a_new_database_is_made_with_its_directory_in_wal_mode_at_the_current_version() {
    let s = Scratch::new("new");
    let p = s.0.join("a/b/history.db");
    drop(Store::open(&p).unwrap());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(s.0.join("a/b"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    let c = rusqlite::Connection::open(&p).unwrap();
    let q = |sql: &str| {
        c.query_row(sql, [], |r| r.get::<_, rusqlite::types::Value>(0))
            .unwrap()
    };
    assert_eq!(
        q("PRAGMA journal_mode"),
        rusqlite::types::Value::Text("wal".into())
    );
    assert_eq!(
        q("PRAGMA user_version"),
        rusqlite::types::Value::Integer(fiox_history::store::SCHEMA_VERSION)
    );
    assert_eq!(
        q("PRAGMA application_id"),
        rusqlite::types::Value::Integer(fiox_history::store::APPLICATION_ID)
    );
    // Made by the guard: marked as fiox's.
    let (dir, name) = fiox_guard::Dir::open_parent(&p).unwrap();
    assert!(dir.mark_of(&name).unwrap().is_ours());
}

/// Start this test binary as a writer of `n` runs (0: until killed) into `db`.
fn writer(db: &Path, name: &str, n: usize) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_writer", "--nocapture", "--test-threads=1"])
        .env("FIOX_HISTORY_CHILD", db)
        .env("FIOX_HISTORY_CHILD_NAME", name)
        .env("FIOX_HISTORY_CHILD_N", n.to_string())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// A writer process (does nothing unless started by `writer`).
#[test]
fn child_writer() {
    let Some(db) = std::env::var_os("FIOX_HISTORY_CHILD") else {
        return;
    };
    let name = std::env::var("FIOX_HISTORY_CHILD_NAME").unwrap();
    let n: usize = std::env::var("FIOX_HISTORY_CHILD_N")
        .unwrap()
        .parse()
        .unwrap();
    let mut store = Store::open(Path::new(&db)).unwrap();
    let mut i = 0;
    while n == 0 || i < n {
        let job = format!("{name}-{i}");
        store
            .insert(&record(result(
                &job,
                100.0 + i as f64,
                "6.1",
                1000 + i as i64,
                0,
            )))
            .unwrap();
        i += 1;
    }
}

fn two_writer_processes_at_once_lose_nothing(db: &Path, _s: &Scratch) {
    let n = 150;
    let mut a = writer(db, "a", n);
    let mut b = writer(db, "b", n);
    assert!(a.wait().unwrap().success());
    assert!(b.wait().unwrap().success());
    let store = Store::open(db).unwrap();
    assert_eq!(store.count().unwrap(), 2 * n as i64);
    for w in ["a", "b"] {
        for i in [0, n / 2, n - 1] {
            let f = Filter {
                job: Some(format!("{w}-{i}")),
                ..Filter::default()
            };
            assert_eq!(store.list(&f, 0).unwrap().len(), 1, "{w}-{i}");
        }
    }
}

#[test]
fn a_killed_writer_leaves_a_consistent_database() {
    let s = Scratch::new("killed");
    let mut child = writer(&s.db(), "k", 0);
    let start = Instant::now();
    // Wait until it has recorded some runs, then SIGKILL it mid-stream.
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let n = Store::open(&s.db()).and_then(|st| st.count()).unwrap_or(0);
        if n >= 40 || start.elapsed() > Duration::from_secs(120) {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let store = Store::open(&s.db()).unwrap();
    let n = store.count().unwrap();
    assert!(n >= 40, "{n}");
    let c = rusqlite::Connection::open(s.db()).unwrap();
    let check: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    // Every run has its metrics (a run is recorded whole or not at all).
    let bare: i64 = c
        .query_row(
            "SELECT count(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM metrics m WHERE m.run_id = r.id)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(bare, 0);
    // And it takes more runs.
    drop(store);
    let mut store = Store::open(&s.db()).unwrap();
    store
        .insert(&record(result("after", 1.0, "6.1", 5, 9)))
        .unwrap();
    assert_eq!(store.count().unwrap(), n + 1);
}

/// PostgreSQL: a database whose schema version is newer than this fiox's is refused and left
/// as it is; so is another program's (tables, no fiox_history); an empty one is made a fiox
/// history at the current version.
#[test]
fn postgres_refuses_a_newer_or_foreign_database_and_leaves_it() {
    let Some(server) = pg::Server::start("refusals") else {
        return;
    };
    let url = server.url();
    drop(Store::open(&url).unwrap());
    let mut c = server.client();
    let v: i64 = c
        .query_one("SELECT schema_version FROM fiox_history", &[])
        .unwrap()
        .get(0);
    assert_eq!(v, fiox_history::store::SCHEMA_VERSION);
    c.batch_execute("UPDATE fiox_history SET schema_version = 99")
        .unwrap();
    let e = match Store::open(&url) {
        Err(e @ HistoryError::Refused { .. }) => e.to_string(),
        other => panic!("not refused: {:?}", other.map(|_| ())),
    };
    assert!(
        e.contains("newer fiox (schema version 99") && e.contains("127.0.0.1"),
        "{e}"
    );
    let v: i64 = c
        .query_one("SELECT schema_version FROM fiox_history", &[])
        .unwrap()
        .get(0);
    assert_eq!(v, 99, "the newer database was modified");
    // Another program's database: a table, no fiox_history.
    c.batch_execute("CREATE DATABASE other").unwrap();
    let other = url.to_string_lossy().replace("/postgres", "/other");
    let mut o = postgres::Client::connect(&other, postgres::NoTls).unwrap();
    o.batch_execute("CREATE TABLE t (x int); INSERT INTO t VALUES (1);")
        .unwrap();
    let e = Store::open(Path::new(&other)).err().unwrap().to_string();
    assert!(e.contains("not a fiox history"), "{e}");
    let tables: i64 = o
        .query_one(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(tables, 1, "tables were added to another program's database");
    // A server that is not there: a clear error naming it.
    let e = Store::open(Path::new("postgresql://fiox@127.0.0.1:1/x"))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("postgresql://fiox@127.0.0.1:1/x"), "{e}");
}
