//! The header an iperf 2 client opens each TCP stream with, read within a deadline and
//! checked before anything is done for it; then the acknowledgement 2.1.8 servers send.

use sonde_proto::iperf2::ack::ClientHdrAck;
use sonde_proto::iperf2::client_hdr::{flags, ClientHeader, BASE_LEN, EXT_LEN};
use sonde_proto::iperf2::{Iperf2Error, Refusal};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;
use thiserror::Error;

/// How long a new connection may take to send its header (iperf 2 sends it at once).
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// A stream's request: its header and the bytes it was sent as (streams of one `-P` test
/// send the same bytes).
#[derive(Debug, Clone)]
pub struct Request {
    pub header: ClientHeader,
    pub raw: Vec<u8>,
}

/// Why a connection is closed before its test.
#[derive(Debug, Error)]
pub enum HeaderError {
    #[error("reading its header: {0}")]
    Io(#[from] std::io::Error),
    #[error("its header cannot be read: {0}")]
    Malformed(#[from] Iperf2Error),
    #[error("its request is refused: {0}")]
    Refused(#[from] Refusal),
    #[error("it asks for {0}, which this server does not serve over iperf 2 yet")]
    Unserved(&'static str),
}

/// How a TCP connection on the iperf 2 port opens.
#[derive(Debug)]
pub enum Opening {
    /// A throughput test's stream, its header read and acknowledged.
    Test(Request),
    /// A `--bounceback` test: the first four bytes of its first request.
    Bounceback([u8; 4]),
}

/// Reads how the connection opens: for a test stream exactly its header (never the payload
/// behind it), checked and acknowledged; for a bounceback test only its first word.
///
/// # Errors
/// [`HeaderError`] for a slow, short, malformed or refused header.
pub fn read(stream: &TcpStream) -> Result<Opening, HeaderError> {
    stream.set_read_timeout(Some(HEADER_TIMEOUT))?;
    let mut s = stream;
    let mut raw = vec![0u8; 4];
    s.read_exact(&mut raw)?;
    let first = u32::from_be_bytes([raw[0], raw[1], raw[2], raw[3]]);
    if first & flags::BOUNCEBACK != 0 {
        return Ok(Opening::Bounceback(first.to_be_bytes()));
    }
    let len = header_len(first);
    raw.resize(len.max(4), 0);
    s.read_exact(&mut raw[4..])?;
    let (header, _) = ClientHeader::parse(&raw)?;
    header.check()?;
    if let Some(what) = unserved(&header) {
        return Err(HeaderError::Unserved(what));
    }
    s.write_all(&ack_bytes())?;
    stream.set_read_timeout(None)?;
    Ok(Opening::Test(Request { header, raw }))
}

/// The header the server opens its connections back to the client with (`-d`, `-r`): the
/// client's own, without the connect-back flags, so the client's listener runs it as a
/// plain test and asks for nothing back.
pub fn back_header(raw: &[u8]) -> Vec<u8> {
    let mut out = raw.to_vec();
    if let Some(first) = out.get_mut(..4) {
        let flags_word = u32::from_be_bytes([first[0], first[1], first[2], first[3]]);
        let cleared = flags_word & !(flags::VERSION1 | flags::RUN_NOW);
        first.copy_from_slice(&cleared.to_be_bytes());
    }
    out
}

/// Bytes of the header that starts with the flags word `first`: the length it declares, or
/// the base fields and the extension the flags promise (at most 255 bytes either way).
fn header_len(first: u32) -> usize {
    if first & flags::LEN_BIT != 0 {
        return (((first & flags::LEN_MASK) >> 1) as usize).max(BASE_LEN);
    }
    BASE_LEN
        + if first & flags::EXTEND != 0 {
            EXT_LEN
        } else {
            0
        }
}

/// What a header asks for that is not served yet.
fn unserved(h: &ClientHeader) -> Option<&'static str> {
    if h.base.flags & flags::KEYCHECK != 0 {
        return Some("a permit key (--permit-key)");
    }
    None
}

/// The acknowledgement iperf 2.1.8 writes after each stream's header.
fn ack_bytes() -> Vec<u8> {
    let mut out = Vec::new();
    ClientHdrAck::default().emit(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_proto::iperf2::captures::{self, hex};

    #[test]
    fn the_length_comes_from_the_flags_as_2_1_8_declares_it() {
        for (c, len) in [
            (captures::TCP_DEFAULT, 60),
            (captures::TCP_TRIP, 80),
            (captures::TCP_BYTES, 60),
        ] {
            let b = hex(c);
            let first = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
            assert_eq!(header_len(first), len, "{c}");
            assert_eq!(b.len(), len);
        }
        assert_eq!(header_len(0), BASE_LEN);
        assert_eq!(header_len(flags::EXTEND), BASE_LEN + EXT_LEN);
        assert_eq!(
            header_len(flags::LEN_BIT),
            BASE_LEN,
            "a declared 0 still reads the base"
        );
    }

    #[test]
    fn the_header_back_asks_for_nothing_back() {
        for c in [captures::TCP_DUAL, captures::TCP_TRADEOFF] {
            let back = back_header(&hex(c));
            let (h, _) = ClientHeader::parse(&back).unwrap();
            assert_eq!(h.connect_back_mode(), None, "{c}");
            assert_eq!(back[4..], hex(c)[4..], "only the flags change");
            assert_eq!(
                back,
                hex(captures::TCP_DEFAULT),
                "{c}: the plain test's header"
            );
        }
    }

    #[test]
    fn the_ack_is_the_captured_one() {
        assert_eq!(ack_bytes(), hex(captures::CLIENT_HDR_ACK));
    }

    #[test]
    fn a_permit_key_is_named_as_unserved() {
        let h = |c: &str| ClientHeader::parse(&hex(c)).unwrap().0;
        for c in [
            captures::TCP_DEFAULT,
            captures::TCP_REVERSE,
            captures::TCP_DUAL,
        ] {
            assert!(unserved(&h(c)).is_none(), "{c}");
        }
        let mut keyed = h(captures::TCP_DEFAULT);
        keyed.base.flags |= flags::KEYCHECK;
        assert!(unserved(&keyed).is_some());
    }
}
