//! The process's limit on open file descriptors: how many connections a server can hold.

/// The soft `RLIMIT_NOFILE` now in force; `None` where it cannot be read or is unlimited.
#[allow(clippy::unnecessary_cast)] // rlim_t is u64 on Linux, not on every Unix
pub fn soft_limit() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct passed.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    (rc == 0 && lim.rlim_cur != libc::RLIM_INFINITY).then_some(lim.rlim_cur as u64)
}
