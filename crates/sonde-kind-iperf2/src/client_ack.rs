//! The acknowledgement `iperf -s` (2.1 and later) writes back on a TCP stream once it has
//! read the client header: read here, bounded in time, so it is never counted as data (in
//! `-R` it comes before the server's data on the same connection). An older server sends
//! none; the wait then ends at its deadline and the test goes on.

use crate::client_error::{AckFault, ClientError};
use sonde_proto::iperf2::ack::{ClientHdrAck, LEN, LEN_WITH_TIMES};
use std::io::{ErrorKind, Read};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// How long a stream waits for the acknowledgement: many round trips of any real path.
pub const ACK_WAIT: Duration = Duration::from_secs(2);

/// Reads stream `id`'s acknowledgement from `s` within `wait`. `Ok(None)` when none came in
/// time, the server closed first (its own output then explains), or, with `data_may_follow`
/// (`-R`: 2.1.8 sends no acknowledgement then, its data at once), the first bytes are not
/// one: they are left unread for the stream's receiver.
///
/// # Errors
/// [`ClientError::AckIo`] on a socket error, [`ClientError::BadAck`] when the bytes are not
/// an acknowledgement and no data may come instead.
pub fn read_ack(
    s: &TcpStream,
    id: u32,
    wait: Duration,
    data_may_follow: bool,
) -> Result<Option<ClientHdrAck>, ClientError> {
    let io = |source| ClientError::AckIo { id, source };
    let server = s.peer_addr().map_err(io)?;
    let deadline = Instant::now() + wait;
    let mut buf = [0u8; LEN_WITH_TIMES];
    let head = fill(s, &mut buf[..8], deadline, true).map_err(io)?;
    let need = match declared(&buf) {
        Some(n) if head == 8 => Some(n),
        _ if head < 8 || data_may_follow => None,
        _ => Some(8),
    };
    let got = match need {
        Some(n) => fill(s, &mut buf[..n], deadline, false).map_err(io)?,
        None => 0,
    };
    s.set_read_timeout(None).map_err(io)?;
    if need.is_none() {
        return Ok(None);
    }
    let (ack, _) = ClientHdrAck::parse(&buf[..got])
        .map_err(|e| ClientError::bad_ack(id, server, AckFault::Parse(e)))?;
    ack.check()
        .map_err(|e| ClientError::bad_ack(id, server, AckFault::Refused(e)))?;
    Ok(Some(ack))
}

/// Fills `buf` from `s` before `deadline` (`peek`: looks without taking the bytes). Returns
/// how many bytes it holds: fewer than asked when time ran out or the server closed.
fn fill(s: &TcpStream, buf: &mut [u8], deadline: Instant, peek: bool) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        s.set_read_timeout(Some(left))?;
        let r = if peek {
            s.peek(buf)
        } else {
            (&mut &*s).read(&mut buf[got..])
        };
        match r {
            Ok(0) => break,
            Ok(n) if peek => {
                got = n;
                if n < buf.len() {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            Ok(n) => got += n,
            Err(e) if sonde_runtime_core::error::is_timeout(&e) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionReset => break,
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// The length the first 8 bytes declare when they begin an acknowledgement (type 2, a
/// length an acknowledgement may have).
fn declared(head: &[u8]) -> Option<usize> {
    let word = |at: usize| -> Option<i32> {
        Some(i32::from_be_bytes(head.get(at..at + 4)?.try_into().ok()?))
    };
    let n = usize::try_from(word(4)?).ok()?;
    (word(0)? == sonde_proto::iperf2::ack::KIND && (n == LEN || n == LEN_WITH_TIMES)).then_some(n)
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
        let ack = read_ack(&c, 1, ACK_WAIT, false).unwrap().unwrap();
        assert_eq!(ack, ClientHdrAck::default());
        let mut rest = [0u8; 4];
        (&c).read_exact(&mut rest).unwrap();
        assert_eq!(&rest, b"data");
    }

    #[test]
    fn silence_ends_at_the_deadline_and_garbage_is_an_error() {
        let (c, _s) = pair();
        let t0 = Instant::now();
        assert!(read_ack(&c, 1, Duration::from_millis(50), false)
            .unwrap()
            .is_none());
        assert!(t0.elapsed() < Duration::from_secs(1));
        let (c, mut s) = pair();
        s.write_all(&[0, 0, 0, 9, 0, 0, 0, 28]).unwrap();
        s.write_all(&[0; 20]).unwrap();
        let e = read_ack(&c, 3, ACK_WAIT, false).unwrap_err();
        assert!(e.to_string().contains("stream 3"), "{e}");
        let (c, mut s) = pair();
        s.write_all(&[0, 0, 0, 2, 0, 0, 0, 5]).unwrap();
        assert!(matches!(
            read_ack(&c, 1, ACK_WAIT, false),
            Err(ClientError::BadAck { .. })
        ));
        // In reverse the server's data may come first: left unread for the receiver.
        let (c, mut s) = pair();
        s.write_all(b"0123456789").unwrap();
        assert!(read_ack(&c, 1, ACK_WAIT, true).unwrap().is_none());
        let mut data = [0u8; 10];
        (&c).read_exact(&mut data).unwrap();
        assert_eq!(&data, b"0123456789");
    }
}
