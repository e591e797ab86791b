//! [`Error`]: what went wrong, with what was being done, for either backend (the framed
//! [`Conn`](crate::Conn) and the [`MptcpConn`](crate::MptcpConn)).
//!
//! A leaf: the options, the path threads, both backends and the one over them
//! ([`AnyConn`](crate::AnyConn)) fail with it, and it imports none of them.

use std::io;

/// What went wrong, with what was being done.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{what}: {source}")]
    Io {
        what: &'static str,
        source: io::Error,
    },
    #[error("no {0} address to connect to")]
    NoAddress(&'static str),
    #[error("cannot resolve {host}: {source}")]
    Resolve { host: String, source: io::Error },
    #[error("{0} timed out")]
    TimedOut(&'static str),
    #[error("the session failed: {0}")]
    Failed(String),
    #[error("only the connecting end can switch paths")]
    NotClient,
    #[error("the session is closed")]
    Closed,
    #[error("{0} would block")]
    WouldBlock(&'static str),
    #[error("the MPTCP backend cannot run here: {0}")]
    MptcpUnavailable(crate::mptcp::probe::Unavailable),
    #[error("the MPTCP path manager: {0}")]
    PathManager(#[from] crate::mptcp::pm::PmError),
}
