//! A control connection: framed messages over TCP with a timeout on every wait.
//!
//! The client's end also says who answered when it is not sonde: bytes that are no frame
//! before the first frame go to `sonde_proto::foreign::recognise` (an iperf3 state byte, our
//! own bytes echoed back), and a close before the peer's first byte is named as such.

use crate::error::RunError;
use sonde_proto::foreign::recognise;
use sonde_proto::frame::FrameDecoder;
use sonde_proto::message::Message;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// How long one blocking read may take before the caller gets control back.
pub const POLL_SLICE: Duration = Duration::from_millis(20);
/// Upper bound on bytes read per call, so a flood of junk cannot grow memory unboundedly
/// (the frame decoder also rejects oversized frames).
const READ_CHUNK: usize = 64 * 1024;
/// Bytes of what this end sent first that are kept to tell an echo from a server.
const SENT_HEAD: usize = 64;

/// A framed control connection.
pub struct ControlConn {
    stream: TcpStream,
    decoder: FrameDecoder,
    peer: String,
    /// Where each read lands before the decoder takes it; allocated once, as the non-blocking
    /// [`Self::try_recv`] runs between a sender's datagrams.
    buf: Box<[u8]>,
    /// The first bytes this end sent, from the magic on (see [`Self::note_sent`]).
    sent_head: Vec<u8>,
    /// This end opened the connection (it sent the magic): a silent close is then named.
    opener: bool,
    /// A byte arrived from the peer.
    heard: bool,
    /// A whole frame arrived: later bad bytes are a broken sonde peer, not a foreign one.
    framed: bool,
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
            buf: vec![0u8; READ_CHUNK].into_boxed_slice(),
            sent_head: Vec::new(),
            opener: false,
            heard: false,
            framed: false,
        })
    }

    /// Records that this end opened the connection with `magic` (written to the stream before
    /// it was wrapped), so that a foreign answer can be recognised.
    pub fn opened_with(&mut self, magic: &[u8]) {
        self.opener = true;
        self.note_sent(magic);
    }

    fn note_sent(&mut self, bytes: &[u8]) {
        let room = SENT_HEAD.saturating_sub(self.sent_head.len());
        self.sent_head
            .extend_from_slice(bytes.get(..room.min(bytes.len())).unwrap_or_default());
    }

    /// Pushes bytes already read from the socket (after the preamble) into the decoder.
    pub fn push_initial(&mut self, bytes: &[u8]) {
        self.heard |= !bytes.is_empty();
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
        self.note_sent(&bytes);
        self.stream.write_all(&bytes).map_err(RunError::ControlIo)
    }

    /// Waits up to `timeout` for the next message. `Ok(None)` when the time ran out.
    /// Unknown optional messages are skipped. A timeout already over reads nothing (each
    /// read may wait a poll slice); to look without waiting, see [`Self::try_recv`].
    ///
    /// # Errors
    /// [`RunError::PeerClosed`] on EOF or reset, [`RunError::Protocol`] on malformed input.
    pub fn recv(&mut self, timeout: Duration) -> Result<Option<Message>, RunError> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(m) = self.next_buffered()? {
                return Ok(Some(m));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            self.read_some()?;
        }
    }

    /// One look at the connection on a non-blocking socket: a message already buffered or
    /// readable now, else `Ok(None)`. The socket is read once whatever the clock says, so a
    /// loop that polls between datagrams (coded, capacity) sees
    /// what its peer sent.
    ///
    /// # Errors
    /// As [`Self::recv`].
    pub fn try_recv(&mut self) -> Result<Option<Message>, RunError> {
        if let Some(m) = self.next_buffered()? {
            return Ok(Some(m));
        }
        // One read that never waits, so the socket keeps its read timeout for the blocking
        // loops and nothing is switched back and forth per look.
        let read = sonde_platform::socket_queue::read_now(&self.stream, &mut self.buf);
        self.take_read(read)?;
        self.next_buffered()
    }

    /// The next whole message already read, skipping unknown optional ones.
    fn next_buffered(&mut self) -> Result<Option<Message>, RunError> {
        while let Some(frame) = self.decoder.next_frame().map_err(|e| self.not_frames(&e))? {
            self.framed = true;
            if let Some(m) =
                Message::decode(&frame).map_err(|e| RunError::Protocol(e.to_string()))?
            {
                return Ok(Some(m));
            }
        }
        Ok(None)
    }

    /// The error for bytes that are not frames: the foreign peer they come from when
    /// [`recognise`] knows it (before any frame), else the frame error `e`.
    fn not_frames(&self, e: &sonde_proto::frame::FrameError) -> RunError {
        let peer = (!self.framed)
            .then(|| recognise(self.decoder.pending(), &self.sent_head))
            .flatten();
        match peer {
            Some(peer) => RunError::Foreign {
                addr: self.peer.clone(),
                peer,
            },
            None => RunError::Protocol(e.to_string()),
        }
    }

    /// One read into the decoder; nothing read (timeout, would block) is not an error.
    fn read_some(&mut self) -> Result<(), RunError> {
        let read = self.stream.read(&mut self.buf);
        self.take_read(read)
    }

    /// What one read into the buffer gave: its bytes into the decoder, or its error sorted.
    fn take_read(&mut self, read: std::io::Result<usize>) -> Result<(), RunError> {
        match read {
            Ok(0) => Err(self.closed()),
            Ok(n) => {
                self.heard = true;
                self.decoder.push(self.buf.get(..n).unwrap_or_default());
                Ok(())
            }
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) =>
            {
                Ok(())
            }
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::ConnectionReset
                        | ErrorKind::ConnectionAborted
                        | ErrorKind::BrokenPipe
                ) =>
            {
                Err(self.closed())
            }
            Err(e) => Err(RunError::ControlIo(e)),
        }
    }

    /// The peer closed (or reset) the connection: [`RunError::ClosedSilently`] when this end
    /// opened it and the peer never sent a byte, else [`RunError::PeerClosed`].
    fn closed(&self) -> RunError {
        if self.opener && !self.heard {
            RunError::ClosedSilently {
                addr: self.peer.clone(),
            }
        } else {
            RunError::PeerClosed
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A look finds nothing without waiting out the read timeout, then the message the peer
    /// sent, then the peer's close; the socket stays blocking for `recv`.
    #[test]
    fn try_recv_looks_without_waiting() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut peer = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let mut c = ControlConn::new(l.accept().unwrap().0).unwrap();
        let t0 = Instant::now();
        for _ in 0..10 {
            assert!(c.try_recv().unwrap().is_none());
        }
        assert!(t0.elapsed() < POLL_SLICE, "{:?}", t0.elapsed());
        peer.write_all(&Message::Done.encode().unwrap()).unwrap();
        let t0 = Instant::now();
        let got = loop {
            if let Some(m) = c.try_recv().unwrap() {
                break m;
            }
            assert!(t0.elapsed() < Duration::from_secs(5), "nothing arrived");
            std::thread::sleep(Duration::from_millis(1));
        };
        assert!(matches!(got, Message::Done), "{got:?}");
        assert!(c.recv(Duration::from_millis(30)).unwrap().is_none());
        drop(peer);
        let t0 = Instant::now();
        let end = loop {
            match c.try_recv() {
                Ok(None) => {}
                other => break other,
            }
            assert!(
                t0.elapsed() < Duration::from_secs(5),
                "the close was not seen"
            );
            std::thread::sleep(Duration::from_millis(1));
        };
        assert!(matches!(end, Err(RunError::PeerClosed)), "{end:?}");
    }
}
