//! [`StoreError`]: why a store operation failed, naming the database.
//!
//! A leaf: the SQLite store, its schema, its readers and the PostgreSQL copy all fail with it,
//! so it imports none of them.

use crate::records::RunId;

/// Why a store operation failed. Every variant names the database file.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite refused (not a database, locked, disk full, constraint, ...).
    #[error("results database {path}: {source}")]
    Sqlite {
        path: String,
        #[source]
        source: rusqlite::Error,
    },
    /// The database was written by a newer sonde.
    #[error(
        "results database {path} has schema version {found}, this sonde knows up to \
         {supported}: use a newer sonde to read it"
    )]
    TooNew {
        path: String,
        found: u32,
        supported: u32,
    },
    /// A stored value is not what this version writes (hand-edited or corrupt database).
    #[error("results database {path}: {what}")]
    Corrupt { path: String, what: String },
    /// A database URL that cannot be used as written: not PostgreSQL's, no host, an unknown
    /// `sslmode`, a trust file (`sslrootcert`) that cannot be read.
    #[error("results database {target}: {what}")]
    BadUrl { target: String, what: String },
    /// No run with that id.
    #[error("results database {path}: no run {run}")]
    NoSuchRun { path: String, run: RunId },
    /// PostgreSQL refused or is away (`target` is the URL without its password).
    #[error("results database {target}: {detail}")]
    Postgres {
        target: String,
        /// The error and its causes, in one line.
        detail: String,
        #[source]
        source: postgres::Error,
    },
    /// PostgreSQL (or whatever holds its port) took the connection but did not answer in time.
    #[error("results database {target}: {what}")]
    PostgresSilent { target: String, what: String },
}
