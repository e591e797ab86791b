//! [`DocError`]: why a report could not be made.
//!
//! Its own leaf so the modules that read the inputs (`input`) can name it without importing
//! the crate root, which in turn builds and renders with them.

use sonde_store::RunId;

/// Why a report could not be made. Every variant that concerns a file names it.
#[derive(Debug, thiserror::Error)]
pub enum DocError {
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// A result file is not JSON.
    #[error("{path}: not valid JSON: {source}")]
    Json {
        path: String,
        #[source]
        source: serde_json::Error,
    },
    /// JSON, but not a result document this report knows.
    #[error("{path}: not a sonde result: {why}")]
    NotAResult { path: String, why: String },
    /// Nothing to report on.
    #[error("no results given: name a lab results database or one or more sonde JSON results")]
    NoInputs,
    /// A database was given together with other inputs.
    #[error("{path} is a results database: report on it alone, not together with other inputs")]
    Mixed { path: String },
    /// A database without a run.
    #[error("results database {path} holds no lab run yet")]
    EmptyDatabase { path: String },
    /// The database has no run with the id asked for.
    #[error("results database {path} has no run {run}; the runs it holds: {runs}")]
    NoSuchRun {
        path: String,
        run: RunId,
        /// Every run it holds, in a few words each.
        runs: String,
    },
    /// A run was asked for, but the inputs are result documents.
    #[error(
        "--run {run} chooses a run of a results database, but the inputs are result documents"
    )]
    RunWithoutDatabase { run: RunId },
    /// Runs were asked of something that is not a results database.
    #[error("{path} is not a results database (nor a directory holding one)")]
    NotADatabase { path: String },
    /// The database could not be read (the message names it).
    #[error(transparent)]
    Store(#[from] sonde_store::StoreError),
    /// A report file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
}
