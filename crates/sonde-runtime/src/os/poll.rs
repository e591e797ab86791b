//! Waiting for a socket to become readable or writable, with a timeout.

use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

fn wait(fd: RawFd, events: libc::c_short, timeout: Duration) -> std::io::Result<bool> {
    let mut pfd = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    let ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
    // SAFETY: one valid pollfd for the duration of the call.
    let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
    if rc < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() == std::io::ErrorKind::Interrupted {
            return Ok(false);
        }
        return Err(e);
    }
    Ok(rc > 0)
}

/// True when `sock` became readable (or has an error/EOF pending) within `timeout`.
pub fn readable(sock: &impl AsRawFd, timeout: Duration) -> std::io::Result<bool> {
    wait(sock.as_raw_fd(), libc::POLLIN, timeout)
}

/// True when `sock` became writable within `timeout`.
pub fn writable(sock: &impl AsRawFd, timeout: Duration) -> std::io::Result<bool> {
    wait(sock.as_raw_fd(), libc::POLLOUT, timeout)
}
