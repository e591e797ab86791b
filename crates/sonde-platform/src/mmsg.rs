//! `sendmmsg`: many datagrams in one syscall without GSO, for paths (and comparisons) where
//! every datagram must leave as its own packet.

use std::io;
use std::os::fd::AsRawFd;

/// Most datagrams handed to one `sendmmsg` call.
pub const MAX_BATCH: usize = 64;

/// Sends each of `datagrams` (at most [`MAX_BATCH`]) on a connected UDP socket; returns how
/// many the kernel took (it may take fewer than given).
///
/// # Errors
/// The OS error when not even the first datagram could be sent (WouldBlock included).
#[cfg(target_os = "linux")]
pub fn send_connected(sock: &impl AsRawFd, datagrams: &[&[u8]]) -> io::Result<usize> {
    let n = datagrams.len().min(MAX_BATCH);
    if n == 0 {
        return Ok(0);
    }
    let mut iovs: [libc::iovec; MAX_BATCH] = [libc::iovec {
        iov_base: std::ptr::null_mut(),
        iov_len: 0,
    }; MAX_BATCH];
    // SAFETY: mmsghdr is plain data; zeroed is a valid "no name, no control" header.
    let mut hdrs: [libc::mmsghdr; MAX_BATCH] = unsafe { std::mem::zeroed() };
    for i in 0..n {
        iovs[i] = libc::iovec {
            iov_base: datagrams[i].as_ptr() as *mut _,
            iov_len: datagrams[i].len(),
        };
        hdrs[i].msg_hdr.msg_iov = &mut iovs[i];
        hdrs[i].msg_hdr.msg_iovlen = 1;
    }
    // SAFETY: the headers point at iovecs and buffers that outlive the call.
    let rc = unsafe { libc::sendmmsg(sock.as_raw_fd(), hdrs.as_mut_ptr(), n as libc::c_uint, 0) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(rc as usize)
}

/// Fallback: one `send` per datagram.
#[cfg(not(target_os = "linux"))]
pub fn send_connected(sock: &std::net::UdpSocket, datagrams: &[&[u8]]) -> io::Result<usize> {
    let mut sent = 0;
    for d in datagrams {
        match sock.send(d) {
            Ok(_) => sent += 1,
            Err(e) if sent == 0 => return Err(e),
            Err(_) => break,
        }
    }
    Ok(sent)
}
