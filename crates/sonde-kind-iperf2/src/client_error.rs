//! What can go wrong driving an iperf 2 server, said with the stream and the server it
//! concerns; each becomes the runtime's [`RunError`] the command prints and exits on.

use sonde_proto::iperf2::{Iperf2Error, Refusal};
use sonde_runtime_core::error::RunError;
use std::io;
use thiserror::Error;

/// A failure of `sonde client --iperf2`.
#[derive(Debug, Error)]
pub enum ClientError {
    /// The server's answer to a stream's header could not be read.
    #[error("stream {id}: reading iperf -s's header acknowledgement: {source}")]
    AckIo { id: u32, source: io::Error },
    /// The server answered a stream's header with bytes that are no acknowledgement.
    #[error("stream {id}: {server} answered the iperf 2 header with {what}: is it `iperf -s` (2.1 or later)?")]
    BadAck {
        id: u32,
        server: String,
        what: String,
    },
    /// Nothing listens on the server's UDP port (the kernel said so: ICMP port unreachable).
    #[error("stream {id}: nothing listens on UDP port {server} (port unreachable): is `iperf -s -u` running there?")]
    UdpRefused { id: u32, server: String },
    /// A socket error during the end of a UDP test.
    #[error("stream {id}: sending iperf 2's final datagrams: {source}")]
    FinIo { id: u32, source: io::Error },
}

impl ClientError {
    /// An acknowledgement that does not parse or is not one.
    pub fn bad_ack(id: u32, server: std::net::SocketAddr, e: AckFault) -> Self {
        ClientError::BadAck {
            id,
            server: server.to_string(),
            what: e.to_string(),
        }
    }
}

/// Why the bytes after a header are not its acknowledgement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum AckFault {
    #[error("bytes that do not parse as an acknowledgement ({0})")]
    Parse(Iperf2Error),
    #[error("a message sonde refuses ({0})")]
    Refused(Refusal),
}

impl From<ClientError> for RunError {
    fn from(e: ClientError) -> Self {
        RunError::Setup(e.to_string())
    }
}
