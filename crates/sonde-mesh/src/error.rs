//! Why a mesh run could not run or finish. Once the agents run, a node that fails (an agent
//! that exits early, a metrics endpoint that does not answer) is part of the result, not an
//! error: only what stops the whole run is here.

use sonde_lab::LabError;
use sonde_store::StoreError;

/// What stopped a mesh run.
#[derive(Debug, thiserror::Error)]
pub enum MeshError {
    /// A bad mesh description or override (the message names the key).
    #[error("mesh: {0}")]
    Spec(String),
    /// A generated agent configuration the agent refuses (a bug, or a schedule the agent's
    /// limits forbid: the message says which).
    #[error("mesh: the agent configuration of node {node}: {reason}")]
    AgentConfig { node: String, reason: String },
    /// The lab could not be built (not root, missing tools, a name taken).
    #[error(transparent)]
    Lab(#[from] LabError),
    /// A results database could not be opened, read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A file or process operation failed.
    #[error("mesh: {what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

/// Wraps an I/O error with what was being done.
pub(crate) fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> MeshError {
    let what = what.into();
    move |source| MeshError::Io { what, source }
}
