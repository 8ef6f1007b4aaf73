//! fiox-history: results that outlive the run. Every run fiox records (a plain run with
//! `--history`, each run of `fiox experiment` and `fiox quick`, or fio and fiox JSON files
//! imported later) becomes one row of an embedded SQLite database (rusqlite with its bundled
//! library: one file, WAL mode, any number of processes writing at once), holding the JSON
//! as produced, the job file and options, the environment, the experiment and variant, and
//! the per-job metrics `fiox compare` reads, indexed for queries. A history shared by several
//! machines can live on a PostgreSQL server instead (same schema, same commands).
//!
//! - [`db`]: the SQL written once for both backends (placeholders, values, transactions).
//! - [`pg`]: the history on a PostgreSQL server (`--history-db=postgresql://...`).
//! - [`store`]: where the database lives, opening it (refusing a corrupt one or one written by
//!   a newer fiox, and never writing over either), the schema and its migrations.
//! - [`record`]: what one recorded run holds, derived from its fio-shaped JSON.
//! - [`query`]: selections of runs (filters), listing, trends, export, tags, gc.
//! - [`regress`]: change points in a series of runs across kernels and commits, with a bound
//!   on false alarms.
//! - [`import`]: fio 3.33 and fiox JSON files and experiment results directories.
//! - [`export`]: JSON lines and CSV.
//! - [`sides`]: selections as `fiox compare` sides (history compare, what differs around a
//!   change point).
//! - [`render`]: the text tables the `fiox history` subcommands print.
//! - [`chart`]: a metric's trend as a chart (fiox-plot's SVG), change points marked.
//! - [`site`]: `fiox history page`, the history as a static HTML site.

pub mod chart;
pub mod db;
pub mod export;
pub mod import;
pub mod pg;
pub mod query;
pub mod record;
pub mod regress;
pub mod render;
pub mod sides;
pub mod site;
pub mod store;

pub use query::Filter;
pub use record::{Record, Source};
pub use store::Store;

use std::path::PathBuf;

/// What can go wrong with the history.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The database exists but fiox will not use it (and leaves it as it is).
    #[error("history database {}: {why}", path.display())]
    Refused { path: PathBuf, why: String },
    #[error("history database {}: {source}", path.display())]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("history database {url}: {why}")]
    Postgres { url: String, why: String },
    #[error(transparent)]
    Guard(#[from] fiox_guard::GuardError),
    /// Writing what was asked for (export to a closed pipe...).
    #[error("writing: {0}")]
    Write(#[source] std::io::Error),
    /// A file to import, or a value given on the command line, that cannot be used.
    #[error("{what}: {why}")]
    Input { what: String, why: String },
}

/// The crate's results.
pub type Result<T> = std::result::Result<T, HistoryError>;
