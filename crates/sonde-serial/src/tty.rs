//! A terminal device opened for binary transfer: raw mode (no echo, no line editing, no
//! CR/LF translation, no XON/XOFF, 8 data bits, no parity), the chosen baud rate, and
//! non-blocking reads and writes waited on with `poll(2)` and a timeout.
//!
//! Everything OS-specific of the serial command lives here. The settings the device had are
//! put back when the [`Tty`] is dropped, as a terminal program does. A pseudo-terminal accepts
//! a baud rate but ignores it: bytes move as fast as the two processes copy them.

use nix::poll::{PollFd, PollFlags, PollTimeout};
use nix::sys::termios::{self, BaudRate, FlushArg, SetArg, SpecialCharacterIndices, Termios};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Baud rates `--baud` accepts (those Linux can set by name).
pub const BAUD_RATES: &[(u32, BaudRate)] = &[
    (1200, BaudRate::B1200),
    (2400, BaudRate::B2400),
    (4800, BaudRate::B4800),
    (9600, BaudRate::B9600),
    (19200, BaudRate::B19200),
    (38400, BaudRate::B38400),
    (57600, BaudRate::B57600),
    (115200, BaudRate::B115200),
    (230400, BaudRate::B230400),
    (460800, BaudRate::B460800),
    (500000, BaudRate::B500000),
    (576000, BaudRate::B576000),
    (921600, BaudRate::B921600),
    (1000000, BaudRate::B1000000),
    (1152000, BaudRate::B1152000),
    (1500000, BaudRate::B1500000),
    (2000000, BaudRate::B2000000),
    (3000000, BaudRate::B3000000),
    (4000000, BaudRate::B4000000),
];

/// The named rate for `baud`, if the OS has one.
pub fn baud_rate(baud: u32) -> Option<BaudRate> {
    BAUD_RATES.iter().find(|(b, _)| *b == baud).map(|(_, r)| *r)
}

/// Why a device could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TtyError {
    #[error("cannot open {path}: {source}")]
    Open { path: PathBuf, source: io::Error },
    #[error("{path} is not a terminal device (tcgetattr: {source})")]
    NotATty { path: PathBuf, source: nix::Error },
    #[error("{baud} is not a baud rate this system can set")]
    Baud { baud: u32 },
    #[error("cannot configure {path} ({what}): {source}")]
    Configure {
        path: PathBuf,
        what: &'static str,
        source: nix::Error,
    },
}

/// What a wait found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ready {
    pub readable: bool,
    pub writable: bool,
    /// The other side hung up (a pty master closed, a USB port unplugged).
    pub hangup: bool,
}

/// An open, configured terminal device.
#[derive(Debug)]
pub struct Tty {
    file: File,
    saved: Termios,
    path: PathBuf,
}

impl Tty {
    /// Opens `path` non-blocking, sets it raw at `baud` and drops any bytes already waiting.
    ///
    /// # Errors
    /// [`TtyError`] naming the device and the step that failed.
    pub fn open(path: &Path, baud: u32) -> Result<Tty, TtyError> {
        let rate = baud_rate(baud).ok_or(TtyError::Baud { baud })?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc_flags())
            .open(path)
            .map_err(|source| TtyError::Open {
                path: path.to_path_buf(),
                source,
            })?;
        let saved = termios::tcgetattr(file.as_fd()).map_err(|source| TtyError::NotATty {
            path: path.to_path_buf(),
            source,
        })?;
        let configure = |what, source| TtyError::Configure {
            path: path.to_path_buf(),
            what,
            source,
        };
        let mut t = saved.clone();
        termios::cfmakeraw(&mut t);
        t.control_flags |= termios::ControlFlags::CLOCAL | termios::ControlFlags::CREAD;
        t.control_flags &= !termios::ControlFlags::CRTSCTS;
        t.control_chars[SpecialCharacterIndices::VMIN as usize] = 0;
        t.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
        termios::cfsetspeed(&mut t, rate).map_err(|e| configure("baud rate", e))?;
        termios::tcsetattr(file.as_fd(), SetArg::TCSANOW, &t)
            .map_err(|e| configure("raw mode", e))?;
        termios::tcflush(file.as_fd(), FlushArg::TCIFLUSH)
            .map_err(|e| configure("flush input", e))?;
        Ok(Tty {
            file,
            saved,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads what is there without waiting; `Ok(0)` when nothing is.
    ///
    /// # Errors
    /// The OS error (EIO when the other side of a pty has closed).
    pub fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        match (&self.file).read(buf) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(0),
            r => r,
        }
    }

    /// Writes what the device takes now without waiting; `Ok(0)` when it takes nothing.
    ///
    /// # Errors
    /// The OS error.
    pub fn write(&self, bytes: &[u8]) -> io::Result<usize> {
        match (&self.file).write(bytes) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(0),
            r => r,
        }
    }

    /// Waits at most `timeout` until the device is readable (or writable, if asked).
    ///
    /// # Errors
    /// The OS error of `poll(2)`; an interrupted wait returns nothing ready instead.
    pub fn wait(&self, want_write: bool, timeout: Duration) -> io::Result<Ready> {
        let mut flags = PollFlags::POLLIN;
        if want_write {
            flags |= PollFlags::POLLOUT;
        }
        let mut fds = [PollFd::new(self.file.as_fd(), flags)];
        let ms = PollTimeout::try_from(timeout).unwrap_or(PollTimeout::MAX);
        match nix::poll::poll(&mut fds, ms) {
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => return Ok(Ready::default()),
            Err(e) => return Err(io::Error::from(e)),
        }
        let got = fds[0].revents().unwrap_or(PollFlags::empty());
        Ok(Ready {
            readable: got.contains(PollFlags::POLLIN),
            writable: got.contains(PollFlags::POLLOUT),
            hangup: got.intersects(PollFlags::POLLHUP | PollFlags::POLLERR),
        })
    }
}

fn libc_flags() -> i32 {
    nix::fcntl::OFlag::O_NONBLOCK.bits() | nix::fcntl::OFlag::O_NOCTTY.bits()
}

impl Drop for Tty {
    fn drop(&mut self) {
        // Best effort: a device that vanished cannot be restored.
        let _ = termios::tcsetattr(self.file.as_fd(), SetArg::TCSANOW, &self.saved);
    }
}
