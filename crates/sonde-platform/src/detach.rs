//! Running in the background (`sonde server -D`): leaving the terminal, and pointing a
//! standard stream at a file.

use std::io;
use std::os::fd::AsRawFd;

/// Forks into the background (`daemon(3)`): the parent exits 0 inside this call; the child
/// returns in a new session, working from `/`, its standard streams on `/dev/null`.
///
/// Call it before any thread is started: a fork keeps only the calling thread, so another
/// thread's locks could be left held for ever.
///
/// # Errors
/// The kernel's, when the fork or the new session fails (the process is then unchanged).
pub fn daemonize() -> io::Result<()> {
    // SAFETY: daemon(3) forks and the parent exits inside it; the caller guarantees no other
    // thread runs yet, so the child starts from a consistent state.
    if unsafe { libc::daemon(0, 0) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Makes `onto` (say, [`std::io::stderr`]) refer to what `from` is open on (`dup2(2)`):
/// what is written to `onto` from then on goes to `from`'s file. `from` may be closed after.
///
/// # Errors
/// The kernel's (a descriptor not open, or too many open).
pub fn redirect(from: &impl AsRawFd, onto: &impl AsRawFd) -> io::Result<()> {
    // SAFETY: dup2 on two descriptors the caller holds open for the call; it closes and
    // replaces `onto` atomically and touches no memory.
    if unsafe { libc::dup2(from.as_raw_fd(), onto.as_raw_fd()) } < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use std::io::Write;

    #[test]
    fn writes_to_a_redirected_descriptor_land_in_the_other_file() {
        let dir = std::env::temp_dir().join(format!("sonde-redirect-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a"), dir.join("b"));
        let target = File::create(&a).unwrap();
        let mut onto = File::create(&b).unwrap();
        redirect(&target, &onto).unwrap();
        drop(target);
        onto.write_all(b"moved").unwrap();
        drop(onto);
        let got = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(got, (b"moved".to_vec(), Vec::new()));
    }

    #[test]
    fn a_closed_descriptor_cannot_be_redirected() {
        struct Closed;
        impl AsRawFd for Closed {
            fn as_raw_fd(&self) -> std::os::fd::RawFd {
                -1
            }
        }
        let e = redirect(&Closed, &std::io::stderr()).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EBADF));
    }
}
