//! A control connection: framed messages over TCP with a timeout on every wait.

use crate::error::RunError;
use sonde_proto::frame::FrameDecoder;
use sonde_proto::message::Message;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// How long one blocking read may take before the caller gets control back.
pub(crate) const POLL_SLICE: Duration = Duration::from_millis(20);
/// Upper bound on bytes read per call, so a flood of junk cannot grow memory unboundedly
/// (the frame decoder also rejects oversized frames).
const READ_CHUNK: usize = 64 * 1024;

/// A framed control connection.
pub struct ControlConn {
    stream: TcpStream,
    decoder: FrameDecoder,
    peer: String,
}

impl ControlConn {
    /// Wraps a connected stream (preamble already exchanged).
    ///
    /// # Errors
    /// When socket options cannot be set.
    pub fn new(stream: TcpStream) -> std::io::Result<Self> {
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(POLL_SLICE))?;
        stream.set_write_timeout(Some(Duration::from_secs(30)))?;
        let peer = stream
            .peer_addr()
            .map(|a| a.to_string())
            .unwrap_or_else(|_| "?".into());
        Ok(Self {
            stream,
            decoder: FrameDecoder::new(),
            peer,
        })
    }

    /// Pushes bytes already read from the socket (after the preamble) into the decoder.
    pub fn push_initial(&mut self, bytes: &[u8]) {
        self.decoder.push(bytes);
    }

    pub fn peer(&self) -> &str {
        &self.peer
    }

    pub fn stream(&self) -> &TcpStream {
        &self.stream
    }

    /// Sends one message.
    ///
    /// # Errors
    /// [`RunError::ControlIo`] when the write fails or times out.
    pub fn send(&mut self, msg: &Message) -> Result<(), RunError> {
        let bytes = msg
            .encode()
            .map_err(|e| RunError::Protocol(e.to_string()))?;
        self.stream.write_all(&bytes).map_err(RunError::ControlIo)
    }

    /// Waits up to `timeout` for the next message. `Ok(None)` when the time ran out.
    /// Unknown optional messages are skipped. The socket is read at least once, however
    /// short the timeout: a poll with a timeout of a microsecond (a non-blocking socket,
    /// [`crate::coded::endpoint::poll_control`]) would otherwise find the deadline passed
    /// before its first read and never see a message the peer sent.
    ///
    /// # Errors
    /// [`RunError::PeerClosed`] on EOF or reset, [`RunError::Protocol`] on malformed input.
    pub fn recv(&mut self, timeout: Duration) -> Result<Option<Message>, RunError> {
        let deadline = Instant::now() + timeout;
        let mut buf = vec![0u8; READ_CHUNK];
        let mut read_once = false;
        loop {
            while let Some(frame) = self
                .decoder
                .next_frame()
                .map_err(|e| RunError::Protocol(e.to_string()))?
            {
                if let Some(m) =
                    Message::decode(&frame).map_err(|e| RunError::Protocol(e.to_string()))?
                {
                    return Ok(Some(m));
                }
            }
            if read_once && Instant::now() >= deadline {
                return Ok(None);
            }
            read_once = true;
            match self.stream.read(&mut buf) {
                Ok(0) => return Err(RunError::PeerClosed),
                Ok(n) => self.decoder.push(&buf[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                    ) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::ConnectionReset
                            | ErrorKind::ConnectionAborted
                            | ErrorKind::BrokenPipe
                    ) =>
                {
                    return Err(RunError::PeerClosed)
                }
                Err(e) => return Err(RunError::ControlIo(e)),
            }
        }
    }
}
