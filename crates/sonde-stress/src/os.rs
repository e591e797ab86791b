//! The few OS calls the stress suite needs beyond mio: the descriptor limit, a reset
//! instead of a FIN when a connection is refused, and killing a load probe's process group. Handing unused heap back after a burst is
//! `sonde_platform::memory`, shared with the agent.

/// Raises this process's soft limit on open descriptors to its hard limit (thousands of
/// connections need thousands of descriptors) and returns the soft limit now in force.
pub fn raise_nofile_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 1024;
        }
        if lim.rlim_cur < lim.rlim_max {
            let want = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &want) == 0 {
                lim.rlim_cur = lim.rlim_max;
            }
        }
    }
    lim.rlim_cur
}

/// Closes `stream` with a reset (SO_LINGER 0): how the services refuse a connection beyond
/// their limit, so the client sees a refusal at once rather than an accepted, silent socket.
pub fn close_with_reset(stream: mio::net::TcpStream) {
    let s = socket2::SockRef::from(&stream);
    let _ = s.set_linger(Some(std::time::Duration::ZERO));
    drop(stream);
}

/// Bytes this end has queued on a TCP socket and the peer has not yet acknowledged
/// (SIOCOUTQ): while it shrinks, a closing peer is still working through what was sent.
/// `None` where the OS cannot tell.
#[cfg(target_os = "linux")]
pub fn unacked_bytes(stream: &mio::net::TcpStream) -> Option<u32> {
    use std::os::fd::AsRawFd;
    let mut n: libc::c_int = 0;
    // SAFETY: TIOCOUTQ (SIOCOUTQ) writes one int through the pointer given.
    let rc = unsafe { libc::ioctl(stream.as_raw_fd(), libc::TIOCOUTQ, &mut n) };
    (rc == 0).then(|| u32::try_from(n).unwrap_or(0))
}

/// `None` where the OS cannot tell.
#[cfg(not(target_os = "linux"))]
pub fn unacked_bytes(_stream: &mio::net::TcpStream) -> Option<u32> {
    None
}

/// Kills `child`'s whole process group (it was started as its leader) with SIGKILL, so what
/// it started goes with it, and reaps `child`.
pub fn kill_group(child: &mut std::process::Child) {
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill only sends a signal; a negative pid names the process group.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.wait();
}
