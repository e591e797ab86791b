//! Receiving TCP data without copying it to user space (`--skip-rx-copy`).

use std::io;
use std::os::fd::AsRawFd;

/// Takes up to `len` bytes off a TCP socket's receive queue and throws them away inside the
/// kernel (`recv` with `MSG_TRUNC`, which TCP treats as "discard"). Returns how many, 0 at EOF.
///
/// # Errors
/// The OS error (WouldBlock on a receive timeout, as for a read).
#[cfg(target_os = "linux")]
pub fn discard(sock: &impl AsRawFd, len: usize) -> io::Result<usize> {
    let mut scratch = [0u8; 1];
    // SAFETY: with MSG_TRUNC TCP writes nothing to the buffer; it is valid for its 1 byte
    // anyway, and `len` only says how much to drop.
    let n = unsafe {
        libc::recv(
            sock.as_raw_fd(),
            scratch.as_mut_ptr().cast(),
            len,
            libc::MSG_TRUNC,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

#[cfg(not(target_os = "linux"))]
pub fn discard(_sock: &impl AsRawFd, _len: usize) -> io::Result<usize> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "discarding receive (MSG_TRUNC on TCP) is Linux-only",
    ))
}
