//! A socket's queues: how much a TCP socket still holds of what this end sent (`SIOCOUTQ`:
//! while it shrinks, a closing peer is still working through what was sent), and one read of
//! what has arrived that never waits, whatever the socket's timeout.

use std::os::fd::AsRawFd;

/// Reads what `sock` has received into `buf` without waiting (`MSG_DONTWAIT`), leaving the
/// socket's blocking mode and read timeout as they are, so a caller that polls between other
/// work needs no switch back and forth. Nothing there yet is `ErrorKind::WouldBlock`; `Ok(0)`
/// is the peer's close, as for any read.
///
/// # Errors
/// The read's OS error.
pub fn read_now(sock: &impl AsRawFd, buf: &mut [u8]) -> std::io::Result<usize> {
    // SAFETY: buf is a valid writable buffer of buf.len() bytes for the call.
    let n = unsafe {
        libc::recv(
            sock.as_raw_fd(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            libc::MSG_DONTWAIT,
        )
    };
    usize::try_from(n).map_err(|_| std::io::Error::last_os_error())
}

/// Bytes queued on the TCP socket `sock` that the peer has not yet acknowledged (sent or
/// not); `None` where the OS cannot tell.
#[cfg(target_os = "linux")]
pub fn unacked_bytes(sock: &impl AsRawFd) -> Option<u32> {
    let mut n: libc::c_int = 0;
    // SAFETY: TIOCOUTQ (SIOCOUTQ on a socket) writes one int through the pointer given.
    let rc = unsafe { libc::ioctl(sock.as_raw_fd(), libc::TIOCOUTQ, &mut n) };
    (rc == 0).then(|| u32::try_from(n).unwrap_or(0))
}

/// `None`: the OS cannot tell.
#[cfg(not(target_os = "linux"))]
pub fn unacked_bytes(_sock: &impl AsRawFd) -> Option<u32> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::io::{ErrorKind, Write};
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn a_read_now_returns_what_arrived_and_never_waits() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut sender = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (receiver, _) = listener.accept().unwrap();
        let mut buf = [0u8; 16];
        let started = std::time::Instant::now();
        let empty = read_now(&receiver, &mut buf).unwrap_err();
        assert_eq!(empty.kind(), ErrorKind::WouldBlock);
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        sender.write_all(b"hello").unwrap();
        let mut got = 0;
        for _ in 0..200 {
            match read_now(&receiver, &mut buf) {
                Ok(n) => {
                    got = n;
                    break;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    std::thread::sleep(std::time::Duration::from_millis(5))
                }
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(&buf[..got], b"hello");
        drop(sender);
        let mut closed = None;
        for _ in 0..200 {
            match read_now(&receiver, &mut buf) {
                Ok(n) => {
                    closed = Some(n);
                    break;
                }
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(5)),
            }
        }
        assert_eq!(closed, Some(0), "the peer's close reads as 0 bytes");
    }

    #[test]
    fn what_a_peer_does_not_read_stays_queued() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut sender = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (_receiver, _) = listener.accept().unwrap();
        assert_eq!(unacked_bytes(&sender), Some(0), "nothing sent yet");
        // Fill the receiver's buffer and window: what is left cannot be acknowledged.
        sender.set_nonblocking(true).unwrap();
        let chunk = vec![0u8; 64 * 1024];
        let mut sent = 0usize;
        loop {
            match sender.write(&chunk) {
                Ok(n) => sent += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => panic!("{e}"),
            }
        }
        let queued = unacked_bytes(&sender).unwrap();
        assert!(queued > 0 && queued as usize <= sent, "{queued} of {sent}");
    }

    #[test]
    fn a_descriptor_that_is_not_open_tells_nothing() {
        struct Closed;
        impl AsRawFd for Closed {
            fn as_raw_fd(&self) -> std::os::fd::RawFd {
                -1
            }
        }
        assert_eq!(unacked_bytes(&Closed), None);
    }
}
