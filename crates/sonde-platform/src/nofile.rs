//! The process's limit on open file descriptors: how many connections a server can hold, and
//! how many a many-connection client may open.

use std::io;

fn read() -> io::Result<libc::rlimit> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct passed.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0 {
        Ok(lim)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The soft `RLIMIT_NOFILE` now in force; `None` where it cannot be read or is unlimited.
#[allow(clippy::unnecessary_cast)] // rlim_t is u64 on Linux, not on every Unix
pub fn soft_limit() -> Option<u64> {
    let lim = read().ok()?;
    (lim.rlim_cur != libc::RLIM_INFINITY).then_some(lim.rlim_cur as u64)
}

/// Raises the soft limit to the hard limit (thousands of connections need thousands of
/// descriptors) and returns the soft limit now in force: the old one when raising it was
/// refused (`u64::MAX` stands for unlimited).
///
/// # Errors
/// The kernel's, when the limit cannot be read.
#[allow(clippy::unnecessary_cast)] // rlim_t is u64 on Linux, not on every Unix
pub fn raise_to_hard() -> io::Result<u64> {
    let mut lim = read()?;
    if lim.rlim_cur < lim.rlim_max {
        let want = libc::rlimit {
            rlim_cur: lim.rlim_max,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: setrlimit only reads the struct passed.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &want) } == 0 {
            lim.rlim_cur = lim.rlim_max;
        }
    }
    Ok(if lim.rlim_cur == libc::RLIM_INFINITY {
        u64::MAX
    } else {
        lim.rlim_cur as u64
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raising_leaves_the_soft_limit_at_the_hard_one() {
        let before = soft_limit();
        let now = raise_to_hard().unwrap();
        let hard = read().unwrap().rlim_max;
        let after = soft_limit();
        assert_eq!(after, (now != u64::MAX).then_some(now));
        assert!(after.unwrap_or(u64::MAX) >= before.unwrap_or(u64::MAX));
        // Raising to a finite hard limit is always allowed, so it is what is in force now.
        if hard != libc::RLIM_INFINITY {
            assert_eq!(read().unwrap().rlim_cur, hard);
        }
        assert!(now > 0);
    }
}
