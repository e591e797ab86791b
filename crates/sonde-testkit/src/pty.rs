//! Pseudo-terminals for the serial tests: a pair whose slave the side under test (a
//! `sonde serial` process, or `sonde-serial`'s runs in the test's own process) opens by path
//! while the test holds the master, and reads and writes on that master that neither block
//! forever nor fail the test on a closed end.

use nix::sys::termios;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::time::Duration;

/// One pseudo-terminal pair; the slave is set raw and kept open by the test, so the master
/// never sees a hang-up when the side under test closes its own.
pub struct Pty {
    pub master: OwnedFd,
    /// Held open (see above).
    pub slave: OwnedFd,
    /// The slave's path (`/dev/pts/N`), for the side under test to open.
    pub path: PathBuf,
}

/// A new pair.
pub fn pty() -> Pty {
    let p = nix::pty::openpty(None, None).unwrap();
    let mut t = termios::tcgetattr(p.slave.as_fd()).unwrap();
    termios::cfmakeraw(&mut t);
    termios::tcsetattr(p.slave.as_fd(), termios::SetArg::TCSANOW, &t).unwrap();
    let path = std::fs::read_link(format!("/proc/self/fd/{}", p.slave.as_raw_fd())).unwrap();
    Pty {
        master: p.master,
        slave: p.slave,
        path,
    }
}

/// What a read of `fd` gives (0 on an error).
pub fn read_some(fd: &OwnedFd, buf: &mut [u8]) -> usize {
    nix::unistd::read(fd, buf).unwrap_or(0)
}

/// Writes all of `b` to `fd`, waiting out a full buffer; stops at another error.
pub fn write_all(fd: &OwnedFd, mut b: &[u8]) {
    while !b.is_empty() {
        match nix::unistd::write(fd, b) {
            Ok(n) => b = &b[n..],
            Err(nix::errno::Errno::EAGAIN) => std::thread::sleep(Duration::from_millis(1)),
            Err(_) => return,
        }
    }
}
