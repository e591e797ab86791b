//! Which common peer that is not sonde sent these bytes: iperf3 (a server's state byte, a
//! client's cookie), iperf 2 (a client's test header) or an echo service (our own bytes back).
//!
//! A sonde end that meets bytes it cannot parse as its own protocol asks [`recognise`] before it
//! reports them, so the user reads "this is an iperf3 server" and what to run instead, not
//! "control frame length 150994944 is outside 1..=262144" (an iperf3 state byte read as a
//! length prefix). Pure: bytes in, a kind out; the callers choose the words for their command.
//!
//! The layouts: iperf3 (`iperf_api.c`) opens each TCP connection with a 37-byte cookie (36 of
//! `a-z2-7` and a NUL) and its server answers a control connection with one signed state byte
//! (9 PARAM_EXCHANGE, -1 ACCESS_DENIED when busy, -2 SERVER_ERROR with two 4-byte error
//! numbers). iperf 2 clients (`payloadhdr.h`) open with `client_hdr_v1`: six big-endian `i32`
//! (flags whose top bits say which header versions follow, threads, port, buffer length,
//! window/bandwidth, amount); iperf 2.0 clients without `-r`/`-d` send no header, only their
//! payload pattern of `0123456789` repeated.

use crate::iperf3::is_cookie;
use crate::iperf3::state::State;

/// A peer recognised by its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForeignPeer {
    /// An iperf3 server answering a control connection (its state byte).
    Iperf3Server,
    /// An iperf3 client opening a connection (its cookie).
    Iperf3Client,
    /// An iperf 2 client opening a test (its header or its payload pattern).
    Iperf2Client,
    /// An echo service (RFC 862 or alike): what came back is what this end sent.
    Echo,
}

impl ForeignPeer {
    /// What the peer is, for a message: "an iperf3 server", "an echo service", ...
    pub fn describe(self) -> &'static str {
        match self {
            ForeignPeer::Iperf3Server => "an iperf3 server",
            ForeignPeer::Iperf3Client => "an iperf3 client",
            ForeignPeer::Iperf2Client => "an iperf 2 client",
            ForeignPeer::Echo => "an echo service (it sent back what sonde sent)",
        }
    }
}

/// PARAM_EXCHANGE, then, when the parameters it read from sonde's bytes made no sense,
/// SERVER_ERROR and its two 4-byte error numbers: a reader that comes late (a busy host) finds
/// all ten bytes at once.
const IPERF3_FIRST_ANSWER_MAX: usize = 10;
/// `client_hdr_v1`: six 32-bit fields.
const IPERF2_HEADER_LEN: usize = 24;
/// The most threads (`-P`) taken for an iperf 2 header; anything above is not one.
const IPERF2_MAX_THREADS: u32 = 1024;
/// Bytes of the payload pattern taken as iperf 2.0's.
const IPERF2_PATTERN: &[u8] = b"0123456789";
/// Bytes of our own that must come back before a reply counts as an echo (fewer when fewer
/// were sent).
const ECHO_MIN: usize = 4;

/// The peer that sent `received` (the first bytes read from it) in answer to `sent` (the first
/// bytes this end sent on the connection; empty when it sent nothing yet). None when the bytes
/// match no peer known here, or are too few to tell.
pub fn recognise(received: &[u8], sent: &[u8]) -> Option<ForeignPeer> {
    if is_echo(received, sent) {
        return Some(ForeignPeer::Echo);
    }
    if is_cookie(received) {
        return Some(ForeignPeer::Iperf3Client);
    }
    if is_iperf2_client(received) {
        return Some(ForeignPeer::Iperf2Client);
    }
    let first = State::from_byte(*received.first()?).ok()?;
    (is_first_server_state(first) && received.len() <= IPERF3_FIRST_ANSWER_MAX)
        .then_some(ForeignPeer::Iperf3Server)
}

/// The states an iperf3 server sends first on a control connection: PARAM_EXCHANGE, or
/// ACCESS_DENIED (busy) or SERVER_ERROR.
fn is_first_server_state(s: State) -> bool {
    matches!(
        s,
        State::ParamExchange | State::AccessDenied | State::ServerError
    )
}

fn is_echo(received: &[u8], sent: &[u8]) -> bool {
    let n = received.len().min(sent.len());
    n >= ECHO_MIN.min(sent.len()) && n > 0 && received[..n] == sent[..n]
}

fn is_iperf2_client(b: &[u8]) -> bool {
    if b.starts_with(IPERF2_PATTERN) {
        return true;
    }
    let Some(h) = b.get(..IPERF2_HEADER_LEN) else {
        return false;
    };
    let field = |i: usize| u32::from_be_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
    let (flags, threads, port) = (field(0), field(4), field(8));
    flags & 0xf000_0000 != 0 && (1..=IPERF2_MAX_THREADS).contains(&threads) && port <= 0xffff
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What sonde's client sends first: the control magic, then a frame.
    const SONDE_HELLO: &[u8] = b"SONDE/C1\x00\x00\x00\x05\x01{}{}";

    /// The first 24 bytes iperf 2.1.8's `iperf -c 127.0.0.1 -p 25301 -t 1` sent.
    const IPERF2_HEADER: [u8; 24] = [
        0x40, 0x01, 0x00, 0x78, 0, 0, 0, 1, 0, 0, 0x62, 0xd5, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
        0xff, 0x9c,
    ];

    #[test]
    fn an_iperf3_servers_state_byte_is_an_iperf3_server() {
        assert_eq!(
            recognise(&[9], SONDE_HELLO),
            Some(ForeignPeer::Iperf3Server)
        );
        assert_eq!(
            recognise(&[0xff], SONDE_HELLO),
            Some(ForeignPeer::Iperf3Server)
        );
        let server_error = [0xfe, 0, 0, 0, 1, 0, 0, 0, 0];
        assert_eq!(
            recognise(&server_error, SONDE_HELLO),
            Some(ForeignPeer::Iperf3Server)
        );
        // Read late, after the server also gave up on the parameters it took from our bytes.
        let exchange_then_error = [9, 0xfe, 0, 0, 0, 9, 0, 0, 0, 0];
        assert_eq!(
            recognise(&exchange_then_error, SONDE_HELLO),
            Some(ForeignPeer::Iperf3Server)
        );
        // a state byte with a long tail is something else
        assert_eq!(recognise(&[9; 40], SONDE_HELLO), None);
    }

    #[test]
    fn an_iperf3_cookie_is_an_iperf3_client() {
        let mut cookie = *b"abcdefghijklmnopqrstuvwxyz234567abcd\0";
        assert_eq!(recognise(&cookie, &[]), Some(ForeignPeer::Iperf3Client));
        cookie[3] = b'8';
        assert_ne!(recognise(&cookie, &[]), Some(ForeignPeer::Iperf3Client));
        assert_eq!(recognise(&cookie[..20], &[]), None);
    }

    #[test]
    fn an_iperf2_header_or_pattern_is_an_iperf2_client() {
        assert_eq!(
            recognise(&IPERF2_HEADER, &[]),
            Some(ForeignPeer::Iperf2Client)
        );
        let v1 = [
            0x80, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0x13, 0x89, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ];
        assert_eq!(recognise(&v1, &[]), Some(ForeignPeer::Iperf2Client));
        assert_eq!(
            recognise(b"01234567890123", &[]),
            Some(ForeignPeer::Iperf2Client)
        );
        // too few bytes, or threads no iperf 2 asks for
        assert_eq!(recognise(&IPERF2_HEADER[..20], &[]), None);
        let mut many = IPERF2_HEADER;
        many[4] = 0x7f;
        assert_eq!(recognise(&many, &[]), None);
    }

    #[test]
    fn our_own_bytes_back_are_an_echo() {
        assert_eq!(recognise(b"SONDE/C1", SONDE_HELLO), Some(ForeignPeer::Echo));
        assert_eq!(recognise(SONDE_HELLO, SONDE_HELLO), Some(ForeignPeer::Echo));
        assert_eq!(recognise(b"SON", SONDE_HELLO), None);
        assert_eq!(recognise(b"SONDX", SONDE_HELLO), None);
        assert_eq!(recognise(b"", SONDE_HELLO), None);
    }

    #[test]
    fn a_sonde_frame_and_unknown_bytes_are_not_recognised() {
        assert_eq!(recognise(&[0, 0, 0, 5, 1, b'{', b'}'], SONDE_HELLO), None);
        assert_eq!(
            recognise(b"HTTP/1.1 400 Bad Request\r\n", SONDE_HELLO),
            None
        );
    }
}
