//! Socket figures read back from the kernel once a data socket is connected: the buffer sizes
//! it granted (SO_SNDBUF, SO_RCVBUF) and the MSS it chose (TCP_MAXSEG).
//!
//! iperf3 reports them in its `start` section (`sndbuf_actual`, `rcvbuf_actual`,
//! `tcp_mss_default`); what the kernel grants differs from what was asked (Linux doubles a
//! requested buffer and caps it at `net.core.wmem_max`/`rmem_max`), so only reading them back
//! tells.

use std::os::fd::AsRawFd;

/// Reads an `int` socket option.
///
/// # Errors
/// The OS error when the socket has no such option.
pub fn get_int(
    sock: &impl AsRawFd,
    level: libc::c_int,
    name: libc::c_int,
) -> std::io::Result<libc::c_int> {
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `v`, which we own.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            level,
            name,
            (&mut v as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(v)
}

/// An `int` option that is a size: None when it cannot be read or is negative.
fn get_size(sock: &impl AsRawFd, level: libc::c_int, name: libc::c_int) -> Option<u32> {
    get_int(sock, level, name)
        .ok()
        .and_then(|v| u32::try_from(v).ok())
}

/// The send buffer the kernel gave the socket, in bytes.
pub fn send_buffer(sock: &impl AsRawFd) -> Option<u32> {
    get_size(sock, libc::SOL_SOCKET, libc::SO_SNDBUF)
}

/// The receive buffer the kernel gave the socket, in bytes.
pub fn recv_buffer(sock: &impl AsRawFd) -> Option<u32> {
    get_size(sock, libc::SOL_SOCKET, libc::SO_RCVBUF)
}

/// The maximum segment size of a connected TCP socket, in bytes (None when the kernel says 0).
pub fn tcp_mss(sock: &impl AsRawFd) -> Option<u32> {
    get_size(sock, libc::IPPROTO_TCP, libc::TCP_MAXSEG).filter(|&m| m > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream, UdpSocket};

    #[test]
    fn buffers_are_what_the_kernel_granted() {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        let asked: libc::c_int = 64 * 1024;
        // SAFETY: setsockopt reads `asked` for its size during the call.
        let rc = unsafe {
            libc::setsockopt(
                sock.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_SNDBUF,
                (&asked as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        assert_eq!(rc, 0);
        // Linux doubles the request for its own bookkeeping.
        assert_eq!(send_buffer(&sock), Some(128 * 1024));
        assert!(recv_buffer(&sock).is_some_and(|b| b > 0));
    }

    #[test]
    fn mss_of_a_loopback_connection() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let _server = listener.accept().unwrap();
        // Loopback's MTU is 65536; the MSS is that minus the IP and TCP headers and options.
        let mss = tcp_mss(&client).unwrap();
        assert!((32_000..65_536).contains(&mss), "{mss}");
    }
}
