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

/// A device wired in loopback: a thread that writes back every byte the side under test sends
/// on the pair's slave, until dropped (it polls the master every 20 ms, so it stops promptly).
pub struct Echo {
    /// The slave's path, for the side under test to open.
    pub path: PathBuf,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Starts echoing on a new pair.
pub fn echo() -> Echo {
    use nix::poll::{PollFd, PollFlags, PollTimeout};
    use std::sync::atomic::{AtomicBool, Ordering};
    let p = pty();
    let path = p.path.clone();
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while !flag.load(Ordering::SeqCst) {
            let mut fds = [PollFd::new(p.master.as_fd(), PollFlags::POLLIN)];
            if nix::poll::poll(&mut fds, PollTimeout::from(20u16)).unwrap_or(0) > 0 {
                let n = read_some(&p.master, &mut buf);
                write_all(&p.master, &buf[..n]);
            }
        }
    });
    Echo {
        path,
        stop,
        thread: Some(thread),
    }
}

impl Drop for Echo {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
