//! How much a TCP socket still holds of what this end sent (`SIOCOUTQ`): while it shrinks, a
//! closing peer is still working through what was sent.

use std::os::fd::AsRawFd;

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
