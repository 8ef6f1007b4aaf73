//! The database: where it lives, opening it, its schema and migrations. (A `postgresql://`
//! URL instead of a file opens a PostgreSQL database: [`crate::pg`].)
//!
//! The file is `$XDG_DATA_HOME/fiox/history.db` (`~/.local/share/fiox/history.db` without
//! XDG_DATA_HOME), or `--history-db` / `FIOX_HISTORY_DB`. Its directory and the (empty) file
//! are made by the guard: by directory descriptor, each new component marked as fiox's, no
//! symbolic link followed unless root or the user owns it. SQLite then opens the file by path
//! (it has no call taking a descriptor), so the guard's promise is carried over by checks: the
//! directory must be the user's own (or root's) and not writable by others (SQLite makes `-wal`
//! and `-shm` beside the database, and another user able to write there could plant a link
//! under those names), the file is opened with SQLITE_OPEN_NOFOLLOW and without
//! SQLITE_OPEN_CREATE, and afterwards must be the very inode the guard saw.
//!
//! A database fiox cannot vouch for is refused and left exactly as it is (no journal-mode
//! change, no migration, nothing written): a file without SQLite's header (corrupt, or another
//! program's file), an SQLite database that is not fiox's (another application id, or tables
//! without a schema version), and one whose schema version is newer than this fiox knows.
//! Migrations run in one IMMEDIATE transaction that reads the version again, so two processes
//! opening a new database at once migrate it once.

use crate::db::{sql_error, Backend, Db};
use crate::{HistoryError, Result};
use fiox_guard::{Dir, Kind, Layout};
use rusqlite::{Connection, OpenFlags};
use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use crate::db::{APPLICATION_ID, SCHEMA_VERSION};

/// `MIGRATIONS[v]` brings a database from schema version `v` to `v + 1`.
const MIGRATIONS: [&str; SCHEMA_VERSION as usize] = [include_str!("schema_v1.sql")];

/// How long a writer waits for another one's transaction (SQLite allows one writer at a time;
/// the others wait, they do not fail).
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// The database file: `flag` (`--history-db`), else `env_db` (FIOX_HISTORY_DB), else
/// `$XDG_DATA_HOME/fiox/history.db` (an XDG_DATA_HOME that is not absolute is ignored, as the
/// XDG specification says), else `$HOME/.local/share/fiox/history.db`.
pub fn resolve(
    flag: Option<&Path>,
    env_db: Option<&OsStr>,
    xdg_data_home: Option<&OsStr>,
    home: Option<&OsStr>,
) -> Result<PathBuf> {
    let nonempty = |v: Option<&OsStr>| v.filter(|s| !s.is_empty()).map(PathBuf::from);
    if let Some(p) = flag.map(Path::to_path_buf).or_else(|| nonempty(env_db)) {
        return Ok(p);
    }
    if let Some(x) = nonempty(xdg_data_home).filter(|p| p.is_absolute()) {
        return Ok(x.join("fiox").join("history.db"));
    }
    match nonempty(home) {
        Some(h) => Ok(h.join(".local/share/fiox/history.db")),
        None => Err(HistoryError::Input {
            what: "history database".into(),
            why: "neither XDG_DATA_HOME nor HOME is set: give --history-db FILE".into(),
        }),
    }
}

/// [`resolve`] from this process's environment.
pub fn default_path(flag: Option<&Path>) -> Result<PathBuf> {
    let var = std::env::var_os;
    resolve(
        flag,
        var("FIOX_HISTORY_DB").as_deref(),
        var("XDG_DATA_HOME").as_deref(),
        var("HOME").as_deref(),
    )
}

/// An open history database.
pub struct Store {
    pub(crate) db: Db,
    /// The directory, held open while SQLite uses files in it (None for PostgreSQL).
    _dir: Option<Dir>,
}

/// Whether `--history-db` names a PostgreSQL database (`postgresql://` or `postgres://`).
pub fn is_postgres_url(p: &Path) -> bool {
    let s = p.to_string_lossy();
    s.starts_with("postgresql://") || s.starts_with("postgres://")
}

/// SQLite's file header: the first 16 bytes of every database.
const HEADER: &[u8; 16] = b"SQLite format 3\0";

impl Store {
    /// Open (making it when missing) the database at `path`; see the module's doc for what is
    /// refused.
    pub fn open(path: &Path) -> Result<Store> {
        if is_postgres_url(path) {
            return Ok(Store {
                db: crate::pg::open(&path.to_string_lossy())?,
                _dir: None,
            });
        }
        let refused = |why: String| HistoryError::Refused {
            path: path.to_path_buf(),
            why,
        };
        let (dir, name) = guarded_file(path)?;
        let st = dir
            .stat(&name)?
            .ok_or_else(|| refused("vanished while being opened".into()))?;
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_NOFOLLOW
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| refused(format!("cannot open: {e}")))?;
        let now = std::fs::symlink_metadata(path).map_err(|e| refused(e.to_string()))?;
        if fiox_guard::Identity::of(&now).dev_ino() != st.id.dev_ino() {
            return Err(refused(
                "the file was replaced while fiox opened it; nothing was written".into(),
            ));
        }
        let mut store = Store {
            db: Db {
                backend: Backend::Sqlite(conn),
                name: path.to_path_buf(),
            },
            _dir: Some(dir),
        };
        // The busy handler waits for another process's transaction, but SQLite answers BUSY at
        // once where waiting could deadlock (two connections switching a new database to WAL
        // at the same moment): then the checks start again, for as long as the handler waits.
        let start = std::time::Instant::now();
        loop {
            match store.check_and_migrate() {
                Err(HistoryError::Sqlite { source, .. })
                    if source.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
                        && start.elapsed() < BUSY_TIMEOUT =>
                {
                    std::thread::sleep(Duration::from_millis(10));
                }
                other => return other.map(|()| store),
            }
        }
    }

    /// The database file's path, or its PostgreSQL URL (without a password).
    pub fn path(&self) -> &Path {
        &self.db.name
    }

    /// Whether the history is on a PostgreSQL server.
    pub fn is_postgres(&self) -> bool {
        self.db.is_postgres()
    }

    /// The SQLite connection (the store opened a file).
    fn conn(&self) -> &Connection {
        match &self.db.backend {
            Backend::Sqlite(c) => c,
            Backend::Postgres(_) => unreachable!("SQLite checks run on SQLite stores only"),
        }
    }

    /// Map an SQLite error to this database's error; corruption found later is a refusal too.
    fn sql<T>(&self, r: rusqlite::Result<T>) -> Result<T> {
        r.map_err(|e| sql_error(self.path(), e))
    }

    /// Refuse what is not fiox's or is newer; then WAL mode and the migrations.
    fn check_and_migrate(&mut self) -> Result<()> {
        let refused = |why: String| HistoryError::Refused {
            path: self.path().to_path_buf(),
            why,
        };
        self.sql(self.conn().busy_timeout(BUSY_TIMEOUT))?;
        // One read transaction: the three answers are one state of the file. Read one by one,
        // another process's first migration could commit between them (version 0, but tables:
        // "not a fiox history"; seen with two writers starting at once).
        let c = self.conn();
        let snapshot = c.execute_batch("BEGIN").and_then(|()| {
            let read = (|| {
                let version: i64 = c.query_row("PRAGMA user_version", [], |r| r.get(0))?;
                let app: i64 = c.query_row("PRAGMA application_id", [], |r| r.get(0))?;
                let tables: i64 =
                    c.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))?;
                Ok((version, app, tables))
            })();
            let end = c.execute_batch("COMMIT");
            read.and_then(|v| end.map(|()| v))
        });
        let (version, app, tables) = self.sql(snapshot)?;
        if version > SCHEMA_VERSION {
            return Err(refused(format!(
                "written by a newer fiox (schema version {version}; this fiox knows up to \
                 {SCHEMA_VERSION}); it is left as it is: use that newer fiox, or another \
                 --history-db"
            )));
        }
        if (version > 0 && app != APPLICATION_ID) || (version == 0 && tables > 0) {
            return Err(refused(
                "an SQLite database that is not a fiox history (another program's?); it is \
                 left as it is: give another --history-db"
                    .into(),
            ));
        }
        let mode: String = self.sql(
            self.conn()
                .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0)),
        )?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(refused(format!(
                "cannot use WAL mode (SQLite chose {mode})"
            )));
        }
        self.sql(self.conn().execute_batch("PRAGMA foreign_keys=ON"))?;
        if version < SCHEMA_VERSION {
            self.migrate()?;
        }
        Ok(())
    }

    /// Bring the schema to [`SCHEMA_VERSION`] in one transaction (the version is read again
    /// inside it: another process may have migrated meanwhile).
    fn migrate(&mut self) -> Result<()> {
        self.db.tx(|db| {
            let version = db.one("PRAGMA user_version", &[])?.int();
            for step in MIGRATIONS.iter().skip(version.max(0) as usize) {
                db.batch(step)?;
            }
            db.batch(&format!(
                "PRAGMA user_version={SCHEMA_VERSION}; PRAGMA application_id={APPLICATION_ID};"
            ))
        })
    }
}

/// Make (by the guard) the directory and the empty database file when missing; check that the
/// directory is private, that the file is a regular file with SQLite's header (or empty), and
/// that SQLite's `-wal` and `-shm` names are not links. Returns the directory and file name.
fn guarded_file(path: &Path) -> Result<(Dir, std::ffi::OsString)> {
    let refused = |why: String| HistoryError::Refused {
        path: path.to_path_buf(),
        why,
    };
    let name = path
        .file_name()
        .ok_or_else(|| refused("names no file".into()))?
        .to_os_string();
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let dir = Dir::create_all(parent, 0o700)?;
    let owner = dir.stat_self().uid;
    if owner != 0 && owner != effective_uid() {
        return Err(refused(format!(
            "its directory {} belongs to uid {owner}, who could replace SQLite's -wal and -shm \
             files there with links; use a directory of your own (or another --history-db)",
            parent.display()
        )));
    }
    if dir.stat_self().mode & 0o022 != 0 {
        return Err(refused(format!(
            "its directory {} is writable by other users (mode {:o}): SQLite's -wal and -shm \
             files beside the database could be replaced by their links; use a private \
             directory (chmod go-w, or another --history-db)",
            parent.display(),
            dir.stat_self().mode & 0o7777
        )));
    }
    match dir.stat(&name)? {
        None => match dir.create_file(&name, 0o600, Layout::Complete) {
            Ok(_) => {}
            // Another process made it just now: use it as an existing one.
            Err(e) if e.is_exists() => {}
            Err(e) => return Err(e.into()),
        },
        Some(st) if st.kind != Kind::File => {
            return Err(refused("is not a regular file; it is left as it is".into()))
        }
        Some(_) => {}
    }
    check_header(&dir, &name, path)?;
    for suffix in ["-wal", "-shm"] {
        let mut side = name.clone();
        side.push(suffix);
        if let Some(st) = dir.stat(&side)? {
            if st.kind != Kind::File {
                return Err(refused(format!(
                    "{} is not a regular file (a link?); SQLite would follow it: remove it",
                    dir.join(&side).display()
                )));
            }
        }
    }
    Ok((dir, name))
}

/// This process's effective uid: the owner of /proc/self (no unsafe call needed).
fn effective_uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map_or(u32::MAX, |m| m.uid())
}

/// Refuse a non-empty file without SQLite's header (read on a descriptor of our own, closed
/// before SQLite opens the file: closing a descriptor drops the process's POSIX locks).
fn check_header(dir: &Dir, name: &OsStr, path: &Path) -> Result<()> {
    let Some(mut f) = dir.open_file(name, libc::O_RDONLY)? else {
        return Ok(());
    };
    let mut head = Vec::with_capacity(16);
    (&mut f)
        .take(16)
        .read_to_end(&mut head)
        .map_err(|e| HistoryError::Refused {
            path: path.to_path_buf(),
            why: format!("cannot read: {e}"),
        })?;
    if !head.is_empty() && head.as_slice() != HEADER {
        return Err(HistoryError::Refused {
            path: path.to_path_buf(),
            why: "is not an SQLite database (corrupt, or another program's file); fiox leaves \
                  it as it is: move it away, or give another --history-db"
                .into(),
        });
    }
    Ok(())
}
