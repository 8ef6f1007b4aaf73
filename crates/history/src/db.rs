//! The SQL behind the store, written once for both backends: SQLite (the default, one file)
//! and PostgreSQL (`postgresql://user@host:port/db`, a history shared by many machines).
//!
//! The queries are written with `?` placeholders and SQL both accept (`string_agg`, `ON
//! CONFLICT ... DO NOTHING/UPDATE` upserts, `INSERT ... RETURNING id`, `CAST(? AS TEXT)`,
//! `TRUE`/`FALSE`); [`Db`] numbers the placeholders `$1, $2...` and spells `instr` as
//! `strpos` for PostgreSQL. Values cross as one type, [`Value`] (i64, f64, text or null, the
//! types the schema uses on both sides: INTEGER/BIGINT, REAL/DOUBLE PRECISION, TEXT). A
//! transaction is `BEGIN IMMEDIATE` on SQLite (one writer at a time, the others wait) and
//! `BEGIN` on PostgreSQL (row locks and the UNIQUE digest make concurrent writers safe).

use crate::{HistoryError, Result};

/// The schema version this fiox writes (SQLite's `user_version`).
pub const SCHEMA_VERSION: i64 = 1;

/// SQLite's `application_id` of a fiox history ("fiox" in ASCII).
pub const APPLICATION_ID: i64 = 0x6669_6f78;

use std::cell::RefCell;
use std::path::{Path, PathBuf};

/// One value of a parameter or a result column.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

impl Value {
    /// As an integer (0 for what is not one).
    pub fn int(&self) -> i64 {
        match self {
            Value::Int(i) => *i,
            Value::Real(f) => *f as i64,
            _ => 0,
        }
    }

    /// As a float (NaN for what is not a number).
    pub fn real(&self) -> f64 {
        match self {
            Value::Real(f) => *f,
            Value::Int(i) => *i as f64,
            _ => f64::NAN,
        }
    }

    /// As text, None for null.
    pub fn opt(&self) -> Option<String> {
        match self {
            Value::Text(s) => Some(s.clone()),
            Value::Int(i) => Some(i.to_string()),
            Value::Real(f) => Some(f.to_string()),
            Value::Null => None,
        }
    }

    /// As text, empty for null.
    pub fn text(&self) -> String {
        self.opt().unwrap_or_default()
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(v)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::Real(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Text(v.to_string())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Text(v)
    }
}

impl From<Option<String>> for Value {
    fn from(v: Option<String>) -> Value {
        v.map_or(Value::Null, Value::Text)
    }
}

impl From<&Option<String>> for Value {
    fn from(v: &Option<String>) -> Value {
        v.clone().into()
    }
}

/// A result row.
pub type Row = Vec<Value>;

/// Which database.
pub enum Backend {
    Sqlite(rusqlite::Connection),
    /// The client needs `&mut` for every call; the store's readers take `&self`.
    Postgres(Box<RefCell<postgres::Client>>),
}

/// An open connection and the name its errors carry (the file, or the URL without password).
pub struct Db {
    pub backend: Backend,
    pub name: PathBuf,
}

impl Db {
    /// Whether this is PostgreSQL.
    pub fn is_postgres(&self) -> bool {
        matches!(self.backend, Backend::Postgres(_))
    }

    /// The rows `q` returns with parameters `p`.
    pub fn rows(&self, q: &str, p: &[Value]) -> Result<Vec<Row>> {
        match &self.backend {
            Backend::Sqlite(c) => {
                let mut st = c.prepare_cached(q).map_err(|e| self.sqlite(e))?;
                let n = st.column_count();
                let rows = st
                    .query_map(rusqlite::params_from_iter(p), |r| {
                        (0..n).map(|i| r.get::<_, Value>(i)).collect()
                    })
                    .map_err(|e| self.sqlite(e))?;
                rows.collect::<rusqlite::Result<_>>()
                    .map_err(|e| self.sqlite(e))
            }
            Backend::Postgres(c) => {
                let q = postgres_sql(q);
                let params: Vec<&(dyn postgres::types::ToSql + Sync)> =
                    p.iter().map(|v| v as _).collect();
                let rows = c.borrow_mut().query(&q, &params).map_err(|e| self.pg(e))?;
                rows.iter()
                    .map(|r| {
                        (0..r.len())
                            .map(|i| r.try_get::<_, Value>(i).map_err(|e| self.pg(e)))
                            .collect()
                    })
                    .collect()
            }
        }
    }

    /// The first row of `q`, None when it returns none.
    pub fn row(&self, q: &str, p: &[Value]) -> Result<Option<Row>> {
        Ok(self.rows(q, p)?.into_iter().next())
    }

    /// The first column of the first row of `q` (Null when there is no row).
    pub fn one(&self, q: &str, p: &[Value]) -> Result<Value> {
        Ok(self
            .row(q, p)?
            .and_then(|r| r.into_iter().next())
            .unwrap_or(Value::Null))
    }

    /// Run `q` (no rows); returns how many rows it changed.
    pub fn exec(&self, q: &str, p: &[Value]) -> Result<u64> {
        match &self.backend {
            Backend::Sqlite(c) => {
                let mut st = c.prepare_cached(q).map_err(|e| self.sqlite(e))?;
                let n = st
                    .execute(rusqlite::params_from_iter(p))
                    .map_err(|e| self.sqlite(e))?;
                Ok(n as u64)
            }
            Backend::Postgres(c) => {
                let params: Vec<&(dyn postgres::types::ToSql + Sync)> =
                    p.iter().map(|v| v as _).collect();
                c.borrow_mut()
                    .execute(&postgres_sql(q), &params)
                    .map_err(|e| self.pg(e))
            }
        }
    }

    /// Run statements without parameters.
    pub fn batch(&self, sql: &str) -> Result<()> {
        match &self.backend {
            Backend::Sqlite(c) => c.execute_batch(sql).map_err(|e| self.sqlite(e)),
            Backend::Postgres(c) => c.borrow_mut().batch_execute(sql).map_err(|e| self.pg(e)),
        }
    }

    /// `f` in one transaction: committed when it succeeds, rolled back otherwise.
    pub fn tx<T>(&self, f: impl FnOnce(&Db) -> Result<T>) -> Result<T> {
        self.batch(if self.is_postgres() {
            "BEGIN"
        } else {
            "BEGIN IMMEDIATE"
        })?;
        match f(self) {
            Ok(v) => {
                self.batch("COMMIT")?;
                Ok(v)
            }
            Err(e) => {
                let _ = self.batch("ROLLBACK");
                Err(e)
            }
        }
    }

    fn sqlite(&self, e: rusqlite::Error) -> HistoryError {
        sql_error(&self.name, e)
    }

    fn pg(&self, e: postgres::Error) -> HistoryError {
        pg_error(&self.name, &e)
    }
}

/// A PostgreSQL error of the database named `name`, with the server's message when it sent
/// one.
pub fn pg_error(name: &Path, e: &postgres::Error) -> HistoryError {
    let why = match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => {
            let mut s = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(c) = src {
                s.push_str(&format!(": {c}"));
                src = c.source();
            }
            s
        }
    };
    HistoryError::Postgres {
        url: name.display().to_string(),
        why,
    }
}

/// `q` for PostgreSQL: `?` numbered `$1, $2...` (no query here has `?` in a string literal),
/// `instr(` spelled `strpos(`.
pub fn postgres_sql(q: &str) -> String {
    let mut out = String::with_capacity(q.len() + 16);
    let mut n = 0;
    for c in q.chars() {
        if c == '?' {
            n += 1;
            out.push_str(&format!("${n}"));
        } else {
            out.push(c);
        }
    }
    out.replace("instr(", "strpos(")
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, Value as V};
        Ok(ToSqlOutput::Owned(match self {
            Value::Null => V::Null,
            Value::Int(i) => V::Integer(*i),
            Value::Real(f) => V::Real(*f),
            Value::Text(s) => V::Text(s.clone()),
        }))
    }
}

impl rusqlite::types::FromSql for Value {
    fn column_result(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        use rusqlite::types::ValueRef as V;
        Ok(match v {
            V::Null => Value::Null,
            V::Integer(i) => Value::Int(i),
            V::Real(f) => Value::Real(f),
            V::Text(t) | V::Blob(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        })
    }
}

type PgResult<T> = std::result::Result<T, Box<dyn std::error::Error + Sync + Send>>;

impl postgres::types::ToSql for Value {
    fn to_sql(
        &self,
        ty: &postgres::types::Type,
        out: &mut bytes::BytesMut,
    ) -> PgResult<postgres::types::IsNull> {
        use postgres::types::Type;
        match self {
            Value::Null => Ok(postgres::types::IsNull::Yes),
            Value::Int(i) if *ty == Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
            Value::Int(i) if *ty == Type::FLOAT8 => (*i as f64).to_sql(ty, out),
            Value::Int(i) if *ty == Type::BOOL => (*i != 0).to_sql(ty, out),
            Value::Int(i) if *ty == Type::TEXT => i.to_string().to_sql(ty, out),
            Value::Int(i) => i.to_sql(ty, out),
            Value::Real(f) => f.to_sql(ty, out),
            Value::Text(s) => s.as_str().to_sql(ty, out),
        }
    }

    fn accepts(_: &postgres::types::Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

impl<'a> postgres::types::FromSql<'a> for Value {
    fn from_sql(ty: &postgres::types::Type, raw: &'a [u8]) -> PgResult<Value> {
        use postgres::types::Type;
        Ok(match *ty {
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::BOOL => Value::Int(bool::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => Value::Real(f64::from_sql(ty, raw)?),
            Type::FLOAT4 => Value::Real(f32::from_sql(ty, raw)?.into()),
            _ => Value::Text(String::from_sql(ty, raw)?),
        })
    }

    fn from_sql_null(_: &postgres::types::Type) -> PgResult<Value> {
        Ok(Value::Null)
    }

    fn accepts(_: &postgres::types::Type) -> bool {
        true
    }
}

/// An SQLite error of the database at `path`; one saying the file is corrupt or no database
/// is a refusal, with what to do.
pub(crate) fn sql_error(path: &Path, e: rusqlite::Error) -> HistoryError {
    use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
    match e.sqlite_error_code() {
        Some(DatabaseCorrupt | NotADatabase) => HistoryError::Refused {
            path: path.to_path_buf(),
            why: format!(
                "the database is corrupt ({e}); fiox leaves it as it is: move it away (or \
                 repair it with sqlite3's .recover) and run again"
            ),
        },
        _ => HistoryError::Sqlite {
            path: path.to_path_buf(),
            source: e,
        },
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn placeholders_are_numbered_for_postgres() {
        assert_eq!(
            super::postgres_sql("SELECT instr(a, ?) FROM t WHERE b = ? AND c IN (?,?)"),
            "SELECT strpos(a, $1) FROM t WHERE b = $2 AND c IN ($3,$4)"
        );
    }
}
