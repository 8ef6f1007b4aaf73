//! The history on a PostgreSQL server: `--history-db=postgresql://user@host:port/db` (or
//! FIOX_HISTORY_DB, or a plain run's `--history=URL`). The same schema as SQLite's, in
//! PostgreSQL's types (BIGSERIAL ids, BIGINT times, DOUBLE PRECISION values), with its version
//! and application id in a one-row table `fiox_history`. The connection is plain (TCP or a Unix
//! socket: `host=/run/postgresql` in the URL's query, or a percent-encoded path as host), with
//! no TLS: use it on a trusted network or over a tunnel.
//!
//! Opening checks and migrates in one transaction holding an advisory lock, so two fiox
//! processes meeting an empty database make the schema once. A database fiox cannot vouch for
//! is refused and nothing is written: one whose schema version is newer than this fiox knows,
//! one whose `fiox_history` names another application, and one with tables but no
//! `fiox_history` (another program's).

use crate::db::{pg_error, Backend, Db, Value, APPLICATION_ID, SCHEMA_VERSION};
use crate::{HistoryError, Result};
use std::cell::RefCell;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

/// `PG_MIGRATIONS[v]` brings a database from schema version `v` to `v + 1`.
const PG_MIGRATIONS: [&str; SCHEMA_VERSION as usize] = [include_str!("schema_v1_pg.sql")];

/// `url` without its password (for messages).
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (auth, host) = match rest.split_once('@') {
        Some((a, h)) => (a, h),
        None => return url.to_string(),
    };
    let user = auth.split_once(':').map_or(auth, |(u, _)| u);
    format!("{scheme}://{user}@{host}")
}

/// Connect to `url`, check the database and migrate it (see the module's doc).
pub fn open(url: &str) -> Result<Db> {
    let name = PathBuf::from(redact(url));
    let mut config = postgres::Config::from_str(url).map_err(|e| HistoryError::Input {
        what: format!("history database {}", name.display()),
        why: format!("not a PostgreSQL URL ({e}); write postgresql://USER@HOST:PORT/DB"),
    })?;
    config.connect_timeout(Duration::from_secs(30));
    config.application_name("fiox");
    let client = config
        .connect(postgres::NoTls)
        .map_err(|e| pg_error(&name, &e))?;
    let db = Db {
        backend: Backend::Postgres(Box::new(RefCell::new(client))),
        name,
    };
    db.tx(check_and_migrate)?;
    Ok(db)
}

/// Inside a transaction: lock, refuse what is not fiox's or is newer, migrate.
fn check_and_migrate(db: &Db) -> Result<()> {
    let refused = |why: String| HistoryError::Refused {
        path: db.name.clone(),
        why,
    };
    db.exec(
        "SELECT pg_advisory_xact_lock(?)",
        &[Value::Int(APPLICATION_ID)],
    )?;
    let ours = db
        .one("SELECT to_regclass('fiox_history') IS NOT NULL", &[])?
        .int()
        != 0;
    let (version, app) = if ours {
        let row = db
            .row(
                "SELECT schema_version, application_id FROM fiox_history",
                &[],
            )?
            .unwrap_or_default();
        let get = |i: usize| row.get(i).map_or(0, Value::int);
        (get(0), get(1))
    } else {
        (0, APPLICATION_ID)
    };
    if version > SCHEMA_VERSION {
        return Err(refused(format!(
            "written by a newer fiox (schema version {version}; this fiox knows up to \
             {SCHEMA_VERSION}); it is left as it is: use that newer fiox, or another \
             --history-db"
        )));
    }
    let tables = db
        .one(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()",
            &[],
        )?
        .int();
    if app != APPLICATION_ID || (!ours && tables > 0) {
        return Err(refused(
            "a PostgreSQL database with tables that are not a fiox history (another \
             program's?); it is left as it is: give another database"
                .into(),
        ));
    }
    if version == SCHEMA_VERSION {
        return Ok(());
    }
    for step in PG_MIGRATIONS.iter().skip(version.max(0) as usize) {
        db.batch(step)?;
    }
    db.exec(
        "UPDATE fiox_history SET schema_version = ?, application_id = ?",
        &[Value::Int(SCHEMA_VERSION), Value::Int(APPLICATION_ID)],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(
            super::redact("postgresql://u:secret@h:5432/db"),
            "postgresql://u@h:5432/db"
        );
        assert_eq!(super::redact("postgresql://h/db"), "postgresql://h/db");
    }
}
