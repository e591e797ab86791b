//! The runner's errors: what stopped a whole run (a single test failing never does).

use std::io;

/// Why a lab run could not start or go on.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Neither a file nor a built-in scenario.
    #[error(
        "no scenario file {name:?} and no built-in scenario of that name (built-ins: {builtins})"
    )]
    UnknownScenario {
        /// What was asked for.
        name: String,
        /// The built-in names.
        builtins: String,
    },
    /// The scenario file does not parse or validate.
    #[error("{origin}: {reason}")]
    Scenario {
        /// Where it came from.
        origin: String,
        /// What is wrong.
        reason: String,
    },
    /// `--settings` named a setting the matrix does not run.
    #[error("--settings {name:?}: the scenario's matrix has no such settings (it has: {known})")]
    UnknownSettings {
        /// The name given.
        name: String,
        /// The names the matrix runs.
        known: String,
    },
    /// `--resume` with nothing to resume, or a run of another scenario.
    #[error("--resume: {0}")]
    Resume(String),
    /// The lab could not be built (or root is missing).
    #[error(transparent)]
    Lab(#[from] sonde_lab::LabError),
    /// The results database failed.
    #[error(transparent)]
    Store(#[from] sonde_store::StoreError),
    /// A file or process operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The OS error.
        source: io::Error,
    },
}
