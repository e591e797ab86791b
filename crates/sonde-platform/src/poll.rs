//! Waiting for a socket to become readable or writable, with a timeout.

use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

/// A poll call's return value as "ready", "not ready" (timeout or a signal) or an error.
fn outcome(rc: libc::c_int) -> std::io::Result<bool> {
    if rc < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() == std::io::ErrorKind::Interrupted {
            return Ok(false);
        }
        return Err(e);
    }
    Ok(rc > 0)
}

fn wait(fd: RawFd, events: libc::c_short, timeout: Duration) -> std::io::Result<bool> {
    let mut pfd = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    let ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
    // SAFETY: one valid pollfd for the duration of the call.
    let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
    outcome(rc)
}

/// True when `sock` became readable (or has an error/EOF pending) within `timeout`.
pub fn readable(sock: &impl AsRawFd, timeout: Duration) -> std::io::Result<bool> {
    wait(sock.as_raw_fd(), libc::POLLIN, timeout)
}

/// True when `sock` became writable within `timeout`.
pub fn writable(sock: &impl AsRawFd, timeout: Duration) -> std::io::Result<bool> {
    wait(sock.as_raw_fd(), libc::POLLOUT, timeout)
}

/// Like [`readable`] with microsecond resolution (`ppoll` with a timespec): for pacing
/// loops whose waits are far below a millisecond, and the probes' receive waits
/// ([`crate::timestamp::wait_readable`]).
pub fn readable_precise(sock: &impl AsRawFd, timeout: Duration) -> std::io::Result<bool> {
    let mut pfd = libc::pollfd {
        fd: sock.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ts = libc::timespec {
        tv_sec: timeout.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: libc::c_long::from(timeout.subsec_nanos() as i32),
    };
    // SAFETY: one valid pollfd and a valid timespec for the duration of the call.
    let rc = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
    outcome(rc)
}
