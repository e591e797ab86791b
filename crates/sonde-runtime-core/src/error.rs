//! Errors of the runtime, with enough context for the CLI to print one clear line.

use sonde_platform::resolve::ResolveError;
use sonde_proto::foreign::ForeignPeer;
use std::io;
use thiserror::Error;

/// What to run instead when a sonde client met `peer`: the commands that fit it.
fn foreign_advice(peer: ForeignPeer) -> &'static str {
    match peer {
        ForeignPeer::Iperf3Server => {
            "this measurement needs `sonde server` there; of sonde's commands only \
             `sonde client --iperf3` and `sonde stress --steps --iperf3` test an iperf3 server"
        }
        ForeignPeer::Echo => {
            "this measurement needs `sonde server` there; `sonde stress` measures an echo service"
        }
        ForeignPeer::Iperf2Client | ForeignPeer::Iperf3Client => {
            "this measurement needs `sonde server` there"
        }
    }
}

/// Why a client or server operation failed.
#[derive(Debug, Error)]
pub enum RunError {
    #[error("cannot resolve host \"{host}\": {source}")]
    Resolve { host: String, source: io::Error },
    #[error("connection refused by {addr}: is `sonde server` running on {addr}?")]
    Refused { addr: String },
    #[error("cannot connect to {addr}: {source}")]
    Connect { addr: String, source: io::Error },
    #[error("timed out after {secs} s connecting to {addr}")]
    ConnectTimeout { addr: String, secs: u64 },
    #[error("{addr} is not a sonde server (it answered with bytes sonde does not recognise): this measurement needs `sonde server` there")]
    NotSonde { addr: String },
    /// The peer answered as a known program that is not sonde (see `sonde_proto::foreign`).
    #[error("{addr} is {}, not a sonde server: {}", peer.describe(), foreign_advice(*peer))]
    Foreign { addr: String, peer: ForeignPeer },
    /// The peer closed the control connection before sending one byte.
    #[error("{addr} closed the connection without a word: not a sonde server (an iperf 2 server, `iperf -s`, closes at once like this: test it with `sonde client --iperf2`), or a sonde server that could not take another connection")]
    ClosedSilently { addr: String },
    #[error("server refused the test ({code}): {message}")]
    ServerRefused { code: String, message: String },
    #[error("the server closed the control connection unexpectedly")]
    PeerClosed,
    #[error("the peer aborted the test: {0}")]
    PeerAborted(String),
    #[error("timed out waiting for {0}")]
    Timeout(&'static str),
    #[error(
        "no data arrived for {secs:.1} s (--rcv-timeout): the sender stopped or the path broke"
    )]
    ReceiveTimeout { secs: f64 },
    #[error("control protocol error: {0}")]
    Protocol(String),
    #[error("control connection error: {0}")]
    ControlIo(io::Error),
    #[error("data stream {id}: {source}")]
    Stream { id: u32, source: io::Error },
    #[error("cannot listen on {addr}: {source}")]
    Listen { addr: String, source: io::Error },
    #[error(
        "congestion control \"{algo}\" is not available on the {side} (available: {available})"
    )]
    Congestion {
        algo: String,
        side: &'static str,
        available: String,
    },
    #[error("the server ({software}) cannot {what}: it lacks the \"{capability}\" capability; upgrade it or {instead}")]
    PeerLacks {
        software: String,
        capability: &'static str,
        what: &'static str,
        instead: &'static str,
    },
    /// Ctrl-C, SIGTERM or SIGHUP: the binary names which (it took the signal).
    #[error("interrupted")]
    Interrupted,
    #[error("the client closed the control connection unexpectedly")]
    ClientGone,
    #[error("{0}")]
    Setup(String),
}

/// A failed lookup keeps its text: [`RunError::Resolve`] and [`RunError::Interrupted`] print
/// what [`ResolveError`]'s two variants do.
impl From<ResolveError> for RunError {
    fn from(e: ResolveError) -> Self {
        match e {
            ResolveError::Failed { host, source } => RunError::Resolve { host, source },
            ResolveError::Interrupted => RunError::Interrupted,
        }
    }
}

impl RunError {
    /// The peer ended the session or is no sonde peer: telling it why the test ends (an abort
    /// message) would be pointless.
    pub fn peer_ended(&self) -> bool {
        matches!(
            self,
            RunError::PeerClosed
                | RunError::PeerAborted(_)
                | RunError::ServerRefused { .. }
                | RunError::NotSonde { .. }
                | RunError::Foreign { .. }
                | RunError::ClosedSilently { .. }
        )
    }
}

/// Whether a read or write on a socket with a timeout ran out of time (or was interrupted)
/// rather than failed: the caller checks its deadline and tries again.
pub fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_lookup_reads_as_it_did() {
        let failed = ResolveError::Failed {
            host: "peer.example".into(),
            source: io::Error::new(io::ErrorKind::NotFound, "no IPv6 address"),
        };
        let text = failed.to_string();
        let e = RunError::from(failed);
        assert_eq!(e.to_string(), text);
        assert_eq!(
            text,
            "cannot resolve host \"peer.example\": no IPv6 address"
        );
        let e = RunError::from(ResolveError::Interrupted);
        assert!(matches!(e, RunError::Interrupted), "{e}");
        assert_eq!(e.to_string(), ResolveError::Interrupted.to_string());
    }
}
