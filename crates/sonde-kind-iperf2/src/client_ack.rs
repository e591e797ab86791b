//! The acknowledgement `iperf -s` (2.1 and later) writes back on a TCP stream once it has
//! read the client header: read here, bounded in time, so it is never counted as data (in
//! `-R` it comes before the server's data on the same connection). An older server sends
//! none; the wait then ends at its deadline and the test goes on.

use crate::client_error::{AckFault, ClientError};
use sonde_proto::iperf2::ack::{ClientHdrAck, LEN_WITH_TIMES};
use std::io::{ErrorKind, Read};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// How long a stream waits for the acknowledgement: many round trips of any real path.
pub const ACK_WAIT: Duration = Duration::from_secs(2);

/// Reads stream `id`'s acknowledgement from `s` within `wait`. `Ok(None)` when none came in
/// time (or the server closed first, which its own report then explains).
///
/// # Errors
/// [`ClientError::AckIo`] on a socket error, [`ClientError::BadAck`] when the bytes are not
/// an acknowledgement.
pub fn read_ack(
    s: &TcpStream,
    id: u32,
    wait: Duration,
) -> Result<Option<ClientHdrAck>, ClientError> {
    let io = |source| ClientError::AckIo { id, source };
    let server = s.peer_addr().map_err(io)?;
    let deadline = Instant::now() + wait;
    let mut buf = [0u8; LEN_WITH_TIMES];
    // The length field (bytes 4..8) says how much to read: 28, or 52 with the times.
    let mut need = 8;
    let mut got = 0;
    while got < need {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            s.set_read_timeout(None).map_err(io)?;
            return Ok(None);
        }
        s.set_read_timeout(Some(left)).map_err(io)?;
        let mut r = s;
        match r.read(&mut buf[got..need]) {
            Ok(0) => return Ok(None),
            Ok(n) => got += n,
            Err(e) if sonde_runtime_core::error::is_timeout(&e) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return Ok(None),
            Err(e) => return Err(io(e)),
        }
        if got == 8 && need == 8 {
            need = declared(&buf).unwrap_or(8).clamp(8, LEN_WITH_TIMES);
            if need == 8 {
                break;
            }
        }
    }
    s.set_read_timeout(None).map_err(io)?;
    let (ack, _) = ClientHdrAck::parse(&buf[..got])
        .map_err(|e| ClientError::bad_ack(id, server, AckFault::Parse(e)))?;
    ack.check()
        .map_err(|e| ClientError::bad_ack(id, server, AckFault::Refused(e)))?;
    Ok(Some(ack))
}

/// The length the first 8 bytes declare, when it is one an acknowledgement may have.
fn declared(head: &[u8]) -> Option<usize> {
    let word: [u8; 4] = head.get(4..8)?.try_into().ok()?;
    let n = usize::try_from(i32::from_be_bytes(word)).ok()?;
    (n > 8).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_proto::iperf2::captures::{hex, CLIENT_HDR_ACK};
    use std::io::Write;
    use std::net::TcpListener;

    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        (c, s)
    }

    #[test]
    fn the_captured_ack_is_read_and_nothing_after_it() {
        let (c, mut s) = pair();
        let mut bytes = hex(CLIENT_HDR_ACK);
        bytes.extend_from_slice(b"data");
        s.write_all(&bytes).unwrap();
        let ack = read_ack(&c, 1, ACK_WAIT).unwrap().unwrap();
        assert_eq!(ack, ClientHdrAck::default());
        let mut rest = [0u8; 4];
        (&c).read_exact(&mut rest).unwrap();
        assert_eq!(&rest, b"data");
    }

    #[test]
    fn silence_ends_at_the_deadline_and_garbage_is_an_error() {
        let (c, _s) = pair();
        let t0 = Instant::now();
        assert!(read_ack(&c, 1, Duration::from_millis(50))
            .unwrap()
            .is_none());
        assert!(t0.elapsed() < Duration::from_secs(1));
        let (c, mut s) = pair();
        s.write_all(&[0, 0, 0, 9, 0, 0, 0, 28]).unwrap();
        s.write_all(&[0; 20]).unwrap();
        let e = read_ack(&c, 3, ACK_WAIT).unwrap_err();
        assert!(e.to_string().contains("stream 3"), "{e}");
        let (c, mut s) = pair();
        s.write_all(&[0, 0, 0, 2, 0, 0, 0, 5]).unwrap();
        assert!(matches!(
            read_ack(&c, 1, ACK_WAIT),
            Err(ClientError::BadAck { .. })
        ));
    }
}
